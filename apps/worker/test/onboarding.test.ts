import { env } from "cloudflare:test";
import { devReply } from "@parley/dev-model/reply";
import { describe, expect, it } from "vitest";
import { mustConnect } from "./chat.ts";
import { world } from "./helpers.ts";

describe("OnboardingAgent", () => {
  it("answers a member's message with the model's reply and counts the free turn", async () => {
    const w = await world();
    const chat = await mustConnect(`/agents/onboarding-agent/${w.projectId}`, w.member.token);
    const turn = await chat.turn("What is this project about?");
    expect(turn.error).toBeNull();
    expect(turn.text).toBe(devReply("What is this project about?"));
    expect(turn.metadata).toMatchObject({ freeTurnsLeft: 19 });
    chat.close();
  });
});

import { describe, expect, it } from "vitest";
import { MAX_REPLY_VERSIONS } from "../src/agents/assistant-replies.ts";
import { mustConnect } from "./chat.ts";
import { api } from "./helpers.ts";
import { funded } from "./metering.ts";

/**
 * A regenerated reply keeps the earlier versions (issue 28): the server writes them into the new
 * reply's metadata from its own transcript, so the person can switch back, and a reload keeps them.
 */
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;

interface Stored {
  role: string;
  parts: { type: string; text?: string }[];
  metadata?: {
    versions?: { parts: { type: string; text?: string }[]; metadata: Record<string, unknown> }[];
  };
}

const textOf = (parts: { type: string; text?: string }[]) =>
  parts.map((part) => (part.type === "text" ? part.text : "")).join("");

describe("a regenerated reply", () => {
  it("keeps the reply it replaced, with its metadata, up to the newest few; the transcript has one reply", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const first = await chat.turn("Tell me [[tokens:5]]");
    const transcript = async () =>
      (
        await api<Stored[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
          token: w.member.token,
        })
      ).body;
    const replaced = (await transcript())[1];
    const again = await chat.turn("", { trigger: "regenerate-message" });
    expect(again.text).not.toBe("");
    let stored = await transcript();
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
    const versions = stored[1]?.metadata?.versions ?? [];
    expect(versions).toHaveLength(1);
    expect(textOf(versions[0]?.parts ?? [])).toBe(first.text);
    expect(versions[0]?.metadata).toMatchObject({ turnId: first.turnId, finish: "completed" });
    // An earlier version never nests its own versions: they move up beside it.
    expect(versions[0]?.metadata).not.toHaveProperty("versions");
    expect(textOf(replaced?.parts ?? [])).toBe(first.text);
    for (let n = 0; n < MAX_REPLY_VERSIONS + 1; n++) {
      await chat.turn("", { trigger: "regenerate-message" });
    }
    stored = await transcript();
    expect(stored).toHaveLength(2);
    expect(stored[1]?.metadata?.versions).toHaveLength(MAX_REPLY_VERSIONS);
    chat.close();
  });
});

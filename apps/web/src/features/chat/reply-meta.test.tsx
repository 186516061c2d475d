import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { readParleyError } from "./chat-panel.tsx";
import { AssistantReplyMeta, previewStatus, readAssistantMeta } from "./reply-meta.tsx";

afterEach(cleanup);

const topUp = <a href="/billing">Top up credits</a>;

describe("AssistantReplyMeta", () => {
  it("shows a reply's price and tokens", () => {
    render(
      <AssistantReplyMeta
        metadata={{
          priceMicros: 1_230,
          steps: 2,
          tokens: {
            promptTokens: 1000,
            completionTokens: 234,
            cachedPromptTokens: 0,
            reasoningTokens: 0,
          },
        }}
        topUp={topUp}
      />,
    );
    expect(screen.getByText("Cost $0.00123")).toBeTruthy();
    expect(screen.getByText(/1,234 tokens/)).toBeTruthy();
    expect(screen.getByText(/2 steps/)).toBeTruthy();
    expect(screen.queryByRole("link")).toBeNull();
  });

  it("turns insufficient_credits and spend_limit into a top-up call to action", () => {
    const { rerender } = render(
      <AssistantReplyMeta metadata={{ code: "insufficient_credits" }} topUp={topUp} />,
    );
    expect(screen.getByText(/out of credits/)).toBeTruthy();
    expect(screen.getByRole("link", { name: "Top up credits" })).toBeTruthy();
    rerender(<AssistantReplyMeta metadata={{ code: "spend_limit" }} topUp={topUp} />);
    expect(screen.getByText(/spend limit/)).toBeTruthy();
  });

  it("shows nothing for a reply without metadata", () => {
    const { container } = render(<AssistantReplyMeta metadata={undefined} topUp={topUp} />);
    expect(container.textContent).toBe("");
  });
});

describe("readAssistantMeta", () => {
  it("drops fields of the wrong type instead of trusting them", () => {
    expect(readAssistantMeta({ priceMicros: 1.5, code: "other", steps: "2" })).toEqual({});
    expect(readAssistantMeta("nope")).toEqual({});
  });
});

describe("previewStatus", () => {
  it("reads the free turns left from the newest reply", () => {
    expect(
      previewStatus([
        { role: "assistant", metadata: { freeTurnsLeft: 5 } },
        { role: "user" },
        { role: "assistant", metadata: { freeTurnsLeft: 4 } },
        { role: "user" },
      ]),
    ).toEqual({ freeTurnsLeft: 4, exhausted: false });
  });

  it("is exhausted on preview_exhausted", () => {
    expect(
      previewStatus([
        { role: "assistant", metadata: { code: "preview_exhausted", freeTurnsLeft: 0 } },
      ]),
    ).toEqual({ freeTurnsLeft: 0, exhausted: true });
  });

  it("knows nothing before the first reply", () => {
    expect(previewStatus([])).toEqual({ freeTurnsLeft: null, exhausted: false });
  });
});

describe("readParleyError", () => {
  it("reads refusal frames and ignores the chat protocol's own frames", () => {
    expect(
      readParleyError(
        JSON.stringify({
          type: "parley_error",
          requestId: "r1",
          error: { code: "payload_too_large", message: "Message too large" },
        }),
      ),
    ).toEqual({ code: "payload_too_large", message: "Message too large" });
    expect(readParleyError(JSON.stringify({ type: "cf_agent_use_chat_response" }))).toBeNull();
    expect(readParleyError("not json")).toBeNull();
  });
});

import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { contextWindow, estimateTokens, messageTokens } from "./context.ts";

const message = (i: number, role: "user" | "assistant", size = 40): UIMessage => ({
  id: `m${i}`,
  role,
  parts: [{ type: "text", text: "x".repeat(size) }],
});

describe("contextWindow", () => {
  it("keeps the newest messages within the budget, starting at a user message", () => {
    const history = Array.from({ length: 2000 }, (_, i) =>
      message(i, i % 2 === 0 ? "user" : "assistant"),
    );
    const window = contextWindow(history, 200);
    expect(window.messages.length).toBeLessThan(20);
    expect(window.messages[0]?.role).toBe("user");
    expect(window.messages.at(-1)?.id).toBe("m1999");
    expect(window.omitted + window.messages.length).toBe(2000);
  });

  it("keeps everything when it fits, and always the last message even when it alone is over", () => {
    const short = [message(0, "user"), message(1, "assistant")];
    expect(contextWindow(short, 10_000)).toEqual({
      messages: short,
      omitted: 0,
      tokens: 2 * messageTokens(message(0, "user")),
    });
    const huge = [message(0, "user"), message(1, "user", 100_000)];
    expect(contextWindow(huge, 100).messages.map((m) => m.id)).toEqual(["m1"]);
  });

  it("counts a message again when its parts grow, and the window's tokens are its messages'", () => {
    const growing = message(0, "user");
    const first = messageTokens(growing);
    expect(first).toBe(estimateTokens(JSON.stringify(growing.parts)));
    growing.parts.push({ type: "text", text: "y".repeat(400) });
    expect(messageTokens(growing)).toBe(estimateTokens(JSON.stringify(growing.parts)));
    expect(messageTokens(growing)).toBeGreaterThan(first + 99);
    const history = [message(1, "assistant"), message(2, "user"), message(3, "assistant")];
    const window = contextWindow(history, 10_000);
    expect(window.messages.map((m) => m.id)).toEqual(["m2", "m3"]);
    expect(window.tokens).toBe(messageTokens(history[1] as UIMessage) * 2);
  });
});

import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { contextWindow } from "./context.ts";

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
    expect(contextWindow(short, 10_000)).toEqual({ messages: short, omitted: 0 });
    const huge = [message(0, "user"), message(1, "user", 100_000)];
    expect(contextWindow(huge, 100).messages.map((m) => m.id)).toEqual(["m1"]);
  });
});

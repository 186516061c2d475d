import { describe, expect, it } from "vitest";
import {
  devReasoning,
  devReply,
  devToolResultReply,
  replyWords,
  toolResultWords,
  words,
} from "./reply.ts";

describe("devReply", () => {
  it("echoes the first five words, then seeded filler, 24 words by default", () => {
    const reply = devReply("Hello there dev model, please answer");
    expect(reply).toBe(
      "Dev model reply to: Hello there dev model, please... flint prairie breeze autumn saffron hazel moss clover saffron breeze sage anchor flint ivory ivory",
    );
    expect(words(reply)).toHaveLength(24);
  });

  it("depends only on the words of the message, not on triggers or spacing", () => {
    expect(devReply("  Hello   there [[tps:5]] dev model,\nplease answer [[latency:9]]")).toBe(
      devReply("Hello there dev model, please answer"),
    );
    expect(devReply("Hello there")).not.toBe(devReply("Hello where"));
  });

  it("honours the reply length and max tokens", () => {
    expect(devReply("hi", { replyTokens: 3 })).toBe("Dev model reply");
    expect(devReply("hi", { replyTokens: 0 })).toBe("");
    expect(devReply("hi")).toMatch(/^Dev model reply to: hi \w+/);
    expect(devReply("one two three", { maxTokens: 6 })).toBe("Dev model reply to: one two");
    expect(replyWords("a b c", 40)).toHaveLength(40);
  });

  it("does not mark a short message as cut", () => {
    expect(devReply("one two three four five", { replyTokens: 9 })).toBe(
      "Dev model reply to: one two three four five",
    );
    expect(devReply("one two three four five six", { replyTokens: 9 })).toBe(
      "Dev model reply to: one two three four five...",
    );
  });
});

describe("reasoning and tool result replies", () => {
  it("reasons in 8 words by default", () => {
    expect(devReasoning("Why is the sky blue today?")).toBe(
      "Thinking about: Why is the... zephyr valley clover",
    );
  });

  it("mentions the tool and cuts a long JSON result", () => {
    const result = JSON.stringify({ a: "x".repeat(100) });
    const reply = toolResultWords("lookup", result, 9);
    expect(reply).toEqual([
      "Dev",
      "model",
      "got",
      "tool",
      "result",
      "from",
      "lookup:",
      `${result.slice(0, 40)}...`,
      reply[8],
    ]);
    expect(devToolResultReply("lookup", "found it", { replyTokens: 9 })).toBe(
      "Dev model got tool result from lookup: found it",
    );
  });
});

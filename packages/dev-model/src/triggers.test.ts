import { describe, expect, it } from "vitest";
import { parseTriggers, stripTriggers } from "./triggers.ts";

describe("parseTriggers", () => {
  it("reads every trigger kind and cuts them out of the text", () => {
    const { triggers, text } = parseTriggers(
      "a [[reasoning]] b [[error]] [[error-after:5]] [[hang]] [[hang-after:0]] [[http-error:429]] [[latency:200]] [[tps:50]] [[tokens:7]] c",
    );
    expect(triggers).toEqual([
      { kind: "reasoning" },
      { kind: "error", afterTokens: 3 },
      { kind: "error", afterTokens: 5 },
      { kind: "hang", afterTokens: 3 },
      { kind: "hang", afterTokens: 0 },
      { kind: "http-error", status: 429 },
      { kind: "latency", ms: 200 },
      { kind: "tps", tokensPerSecond: 50 },
      { kind: "tokens", count: 7 },
    ]);
    expect(text.split(/\s+/)).toEqual(["a", "b", "c"]);
  });

  it("reads the cache, encrypted reasoning, typed error and retry-after triggers", () => {
    const { triggers } = parseTriggers(
      "[[cache]] [[reasoning:encrypted]] [[error:provider_overloaded]] [[retry-after:30]]",
    );
    expect(triggers).toEqual([
      { kind: "cache" },
      { kind: "reasoning", encrypted: true },
      { kind: "error-type", errorType: "provider_overloaded" },
      { kind: "retry-after", seconds: 30 },
    ]);
    const bad = "[[cache:1]] [[reasoning:plain]] [[error:overload]] [[retry-after:soon]]";
    expect(parseTriggers(bad)).toEqual({ triggers: [], text: bad });
  });

  it("reads [[markdown]] and leaves a markdown marker with an argument as text", () => {
    expect(parseTriggers("show me [[markdown]]").triggers).toEqual([{ kind: "markdown" }]);
    expect(parseTriggers("[[markdown:long]]").triggers).toEqual([]);
  });

  it("parses tool triggers with JSON that itself contains brackets", () => {
    const { triggers, text } = parseTriggers(
      'save [[tool:update_memory {"tags": ["a]]", "b"], "n": {"x": 1}}]] done [[tool:ping]]',
    );
    expect(triggers).toEqual([
      { kind: "tool", name: "update_memory", arguments: '{"tags":["a]]","b"],"n":{"x":1}}' },
      { kind: "tool", name: "ping", arguments: "{}" },
    ]);
    expect(text.split(/\s+/).filter(Boolean)).toEqual(["save", "done"]);
  });

  it("leaves malformed or unknown markers in the text", () => {
    const input =
      "[[latency:soon]] [[tool:x [1]]] [[tool:x {bad}]] [[http-error:200]] [[nope]] [[error:1]] [[tps:5";
    const { triggers, text } = parseTriggers(input);
    expect(triggers).toEqual([]);
    expect(text).toBe(input);
  });

  it("strips triggers glued to words", () => {
    expect(stripTriggers("hello[[tps:5]]world")).toBe("hello world");
  });
});

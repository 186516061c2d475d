import { describe, expect, it } from "vitest";
import { jsonTextTooDeep, jsonValueProblem, MAX_JSON_DEPTH } from "./json.ts";

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("jsonTextTooDeep", () => {
  it("counts arrays and objects, not brackets inside strings", () => {
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonTextTooDeep(`{"a":${nested(40)}}`, 40)).toBe(true);
    expect(jsonTextTooDeep(JSON.stringify({ text: "[".repeat(1000) }))).toBe(false);
    // An escaped quote does not end the string.
    expect(jsonTextTooDeep(JSON.stringify({ text: `\\"${"{".repeat(100)}` }))).toBe(false);
  });

  it("copes with a megabyte of nesting without recursion", () => {
    expect(jsonTextTooDeep("[".repeat(1_000_000))).toBe(true);
  });
});

describe("jsonValueProblem", () => {
  it("finds nesting deeper than the limit, naming the top-level field", () => {
    expect(jsonValueProblem(JSON.parse(nested(MAX_JSON_DEPTH)))).toBeNull();
    expect(jsonValueProblem(JSON.parse(nested(MAX_JSON_DEPTH + 1)))).toMatchObject({ path: [0] });
    const body = JSON.parse(`{"name":"x","memory":{"a":${nested(10_000)}}}`);
    expect(jsonValueProblem(body)).toEqual({
      path: ["memory"],
      message: "must not nest arrays and objects more than 32 levels deep",
    });
  });

  it("finds __proto__ keys and constructor.prototype paths anywhere", () => {
    expect(jsonValueProblem(JSON.parse('{"a":[1,{"__proto__":{}}]}'))).toEqual({
      path: ["a", 1, "__proto__"],
      message: "__proto__ is not allowed as a key",
    });
    expect(jsonValueProblem(JSON.parse('{"x":{"constructor":{"prototype":[]}}}'))).toEqual({
      path: ["x", "constructor", "prototype"],
      message: "constructor.prototype is not allowed as a key path",
    });
    // Each on its own is an ordinary key.
    expect(jsonValueProblem(JSON.parse('{"constructor":{"name":1},"prototype":{}}'))).toBeNull();
    expect(jsonValueProblem(JSON.parse('{"constructor":"x"}'))).toBeNull();
    expect(jsonValueProblem({ ...JSON.parse('{"__proto__":1}') })).not.toBeNull();
  });

  it("passes scalars and ordinary values", () => {
    for (const value of [null, 1, "s", true, [], {}, { a: [1, { b: null }] }]) {
      expect(jsonValueProblem(value)).toBeNull();
    }
  });
});

import { MAX_MEMORY_BYTES } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { parseMemory } from "./memory.ts";

describe("parseMemory", () => {
  it("accepts a JSON object, and an empty text as an empty memory", () => {
    expect(parseMemory('{"audience": "founders", "tags": [1, 2]}')).toEqual({
      ok: true,
      memory: { audience: "founders", tags: [1, 2] },
    });
    expect(parseMemory("  ")).toEqual({ ok: true, memory: {} });
  });

  it("explains invalid JSON", () => {
    const result = parseMemory('{"audience": ');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^Not valid JSON/);
  });

  it("refuses arrays, strings and null at the top level", () => {
    for (const text of ["[1]", '"text"', "null", "42"]) {
      const result = parseMemory(text);
      expect(result).toMatchObject({ ok: false });
      if (!result.ok) expect(result.error).toMatch(/must be a JSON object/);
    }
  });

  it("refuses an empty key, as the server does", () => {
    expect(parseMemory('{"": 1}')).toMatchObject({ ok: false });
  });

  it("refuses a memory over the server's size limit before sending it", () => {
    const result = parseMemory(JSON.stringify({ notes: "x".repeat(MAX_MEMORY_BYTES) }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/too large/);
  });
});

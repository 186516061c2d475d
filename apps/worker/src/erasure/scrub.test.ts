import { describe, expect, it } from "vitest";
import { scrubText } from "./scrub.ts";

describe("scrubText", () => {
  const replacements = [
    { find: "usr_01abc", replace: "anon_x" },
    { find: "ada@example.com", replace: "[erased]" },
  ];

  it("replaces every identifier in any letter case, and keeps JSON valid", () => {
    const memory = JSON.stringify({
      contact: "ADA@Example.COM",
      note: "ask Ada@example.com or usr_01ABC, twice: ada@example.com",
    });
    const scrubbed = scrubText(memory, replacements);
    expect(JSON.parse(scrubbed)).toEqual({
      contact: "[erased]",
      note: "ask [erased] or anon_x, twice: [erased]",
    });
  });

  it("takes needles literally (no pattern characters) and ignores empty ones", () => {
    expect(scrubText("a.b+c@x.io and aXb+c@x.io", [{ find: "a.b+c@x.io", replace: "[e]" }])).toBe(
      "[e] and aXb+c@x.io",
    );
    expect(scrubText("keep", [{ find: "", replace: "x" }])).toBe("keep");
  });
});

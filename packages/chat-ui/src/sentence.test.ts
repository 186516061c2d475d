import { describe, expect, it } from "vitest";
import { sentence } from "./sentence.ts";

describe("sentence", () => {
  it("ends an API message with a full stop, once", () => {
    expect(sentence("Version 1 was replaced: the document is at version 2")).toBe(
      "Version 1 was replaced: the document is at version 2.",
    );
    expect(sentence("Already one.")).toBe("Already one.");
    expect(sentence("Really?  ")).toBe("Really?");
    expect(sentence('He said "stop."')).toBe('He said "stop."');
    expect(sentence("Wait…")).toBe("Wait…");
    expect(sentence("")).toBe("");
  });
});

import { describe, expect, it } from "vitest";
import { keyedHash, normalizedEmail } from "./keyed-hash.ts";

describe("normalizedEmail", () => {
  it.each([
    ["Ada@Example.com", "ada@example.com"],
    ["ada+farm1@example.com", "ada@example.com"],
    ["a.d.a+x@gmail.com", "ada@gmail.com"],
    ["A.DA@googlemail.com", "ada@gmail.com"],
    ["a.da@example.com", "a.da@example.com"],
  ])("%s is %s", (input, expected) => {
    expect(normalizedEmail(input)).toBe(expected);
  });
});

describe("keyedHash", () => {
  it("depends on the key, the label and the value, and hides the value", async () => {
    const a = await keyedHash("k1", "rate", "usr_1");
    expect(a).toHaveLength(32);
    expect(a).not.toContain("usr_1");
    expect(await keyedHash("k1", "rate", "usr_1")).toBe(a);
    expect(await keyedHash("k2", "rate", "usr_1")).not.toBe(a);
    expect(await keyedHash("k1", "grant", "usr_1")).not.toBe(a);
    expect(await keyedHash("k1", "rate", "usr_2")).not.toBe(a);
  });
});

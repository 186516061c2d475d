import { describe, expect, it } from "vitest";
import { safeNext } from "./next-path.ts";

describe("safeNext", () => {
  it("keeps a path of this app, with its query and hash", () => {
    expect(safeNext("/sessions/ses_1")).toBe("/sessions/ses_1");
    expect(safeNext("/billing?checkout=success#activity")).toBe(
      "/billing?checkout=success#activity",
    );
  });

  it("refuses anything that could leave the app or loop", () => {
    for (const value of [
      "https://evil.example/",
      "//evil.example/x",
      "/\\evil.example",
      "\\\\evil",
      "javascript:alert(1)",
      "/signin",
      "/signup?next=/x",
      "/a b",
      "",
      42,
      undefined,
      `/${"x".repeat(2001)}`,
    ]) {
      expect(safeNext(value)).toBeNull();
    }
  });
});

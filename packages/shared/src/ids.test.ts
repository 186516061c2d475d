import { describe, expect, it } from "vitest";
import { isId, newId } from "./ids.ts";

describe("ids", () => {
  it("have the kind's prefix and 26 base32 characters", () => {
    const id = newId("project");
    expect(id).toMatch(/^prj_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(isId("project", id)).toBe(true);
    expect(isId("session", id)).toBe(false);
    expect(isId("project", `${id}x`)).toBe(false);
  });

  it("sort by creation time, so a list can page on the id alone", () => {
    const ids = [0, 1, 31, 32, 1_000, 1_800_000_000_000].map((t) => newId("org", t));
    expect([...ids].sort()).toEqual(ids);
  });

  it("differ when made in the same millisecond", () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 1000 }, () => newId("user", now)));
    expect(ids.size).toBe(1000);
  });
});

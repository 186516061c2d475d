import { describe, expect, it } from "vitest";
import { lostOrg } from "./org-removal.ts";

const org = (id: string, name = id) => ({ id, name, role: "member" as const, createdAt: "x" });

describe("lostOrg", () => {
  it("names the org the person was working in once it is gone from their orgs", () => {
    const before = { orgs: [org("a", "Acme"), org("b")] };
    expect(lostOrg(before, { orgs: [org("b")] }, "a")).toEqual({ id: "a", name: "Acme" });
  });

  it("is no loss on a first read, a sign-out, another org going, or one still there", () => {
    const before = { orgs: [org("a"), org("b")] };
    expect(lostOrg(undefined, before, "a")).toBeNull();
    expect(lostOrg(before, null, "a")).toBeNull();
    expect(lostOrg(before, { orgs: [org("a")] }, "a")).toBeNull();
    expect(lostOrg(before, before, "a")).toBeNull();
    expect(lostOrg(before, { orgs: [] }, null)).toBeNull();
  });
});

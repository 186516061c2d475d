import { describe, expect, it } from "vitest";
import { isLastOwner, mayRemove, memberName, rolesToChange, rolesToGrant } from "./member-rules.ts";

describe("member rules, as orgs.ts enforces them", () => {
  it("lets only an owner grant, take away or remove the owner role", () => {
    expect(rolesToGrant("owner")).toEqual(["owner", "admin", "member"]);
    expect(rolesToGrant("admin")).toEqual(["admin", "member"]);
    expect(rolesToGrant("member")).toEqual([]);
    expect(rolesToChange("owner", "owner")).toEqual(["owner", "admin", "member"]);
    expect(rolesToChange("admin", "member")).toEqual(["admin", "member"]);
    expect(rolesToChange("admin", "admin")).toEqual(["admin", "member"]);
    expect(rolesToChange("admin", "owner")).toEqual([]);
    expect(rolesToChange("member", "member")).toEqual([]);
    expect(mayRemove("owner", "owner")).toBe(true);
    expect(mayRemove("admin", "admin")).toBe(true);
    expect(mayRemove("admin", "owner")).toBe(false);
    expect(mayRemove("member", "member")).toBe(false);
  });

  it("names a member by name, else by email", () => {
    expect(memberName({ name: "Ada Lovelace", email: "ada@example.com" })).toBe("Ada Lovelace");
    expect(memberName({ name: " ", email: "ada@example.com" })).toBe("ada@example.com");
  });

  it("knows the only owner once every member has loaded", () => {
    const ada = { userId: "u1", role: "owner" as const };
    const bob = { userId: "u2", role: "admin" as const };
    expect(isLastOwner([ada, bob], true, "u1")).toBe(true);
    expect(isLastOwner([ada, bob], true, "u2")).toBe(false);
    expect(isLastOwner([ada, { ...bob, role: "owner" }], true, "u1")).toBe(false);
    // Another owner may be on a page not loaded yet: the server decides.
    expect(isLastOwner([ada, bob], false, "u1")).toBe(false);
  });
});

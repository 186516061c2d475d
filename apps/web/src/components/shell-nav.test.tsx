import type { OrgSummary, Role } from "@parley/shared";
import { cleanup, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderInApp } from "../test/render.tsx";
import { NavLinks } from "./shell.tsx";

const session = vi.hoisted(() => ({ org: null as OrgSummary | null }));
vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({ org: session.org }),
  canManage: (org: OrgSummary | null) => org?.role === "owner" || org?.role === "admin",
}));

afterEach(cleanup);

const orgAs = (role: Role): OrgSummary => ({ id: "org_1", name: "Acme", role, createdAt: "x" });

const links = () =>
  within(screen.getByRole("navigation", { name: "Main" }))
    .getAllByRole("link")
    .map((link) => link.textContent);

describe("the main navigation", () => {
  it("shows Developers (and Admin) to owners and admins only", async () => {
    for (const role of ["owner", "admin"] as const) {
      session.org = orgAs(role);
      await renderInApp(<NavLinks />);
      expect(links()).toContain("Developers");
      expect(screen.getByRole("link", { name: "Developers" }).getAttribute("href")).toBe(
        "/developers",
      );
      // Erasure and the org's export under one name that says what they are (was "Admin").
      expect(links()).not.toContain("Admin");
      expect(screen.getByRole("link", { name: "Data & privacy" }).getAttribute("href")).toBe(
        "/admin",
      );
      cleanup();
    }
    session.org = orgAs("member");
    await renderInApp(<NavLinks />);
    expect(links()).not.toContain("Developers");
    expect(links()).not.toContain("Data & privacy");
  });
});

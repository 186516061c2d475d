import type { OrgSummary } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../features/members/members-api.ts";
import type { ErasureRequest } from "../lib/api.ts";
import { dataRightsApi } from "../lib/data-rights-api.ts";
import { renderInApp } from "../test/render.tsx";
import AdminPage from "./admin-page.tsx";

const session = vi.hoisted(() => ({
  org: { id: "org_1", name: "Acme", role: "owner", createdAt: "x" } as OrgSummary,
}));

vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({
    me: { id: "u1", email: "olive@example.com", name: "Olive Owner", createdAt: "x", orgs: [] },
    org: session.org,
    reload: async () => {},
  }),
  canManage: (org: OrgSummary | null) => org?.role === "owner" || org?.role === "admin",
}));

beforeEach(() => {
  session.org = { id: "org_1", name: "Acme", role: "owner", createdAt: "x" };
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("AdminPage", () => {
  it("tells a member who came by URL that erasure is for owners and admins, and asks the API nothing", async () => {
    session.org = { id: "org_1", name: "Acme", role: "member", createdAt: "x" };
    const list = vi.spyOn(dataRightsApi, "erasureRequests");
    const members = vi.spyOn(membersApi, "members");
    await renderInApp(<AdminPage />, { path: "/admin" });
    expect(
      await screen.findByText("Only owners and admins can file erasure requests"),
    ).toBeTruthy();
    expect(screen.queryByRole("form", { name: "File an erasure request" })).toBeNull();
    expect(screen.queryByRole("region", { name: "Erasure requests" })).toBeNull();
    expect(list).not.toHaveBeenCalled();
    expect(members).not.toHaveBeenCalled();
  });

  it("holds the org's data rights: erasure for owners and admins, the org's export for owners", async () => {
    vi.spyOn(membersApi, "members").mockResolvedValue({ items: [], nextCursor: null });
    vi.spyOn(dataRightsApi, "erasureRequests").mockResolvedValue({ items: [], nextCursor: null });
    const exports = vi
      .spyOn(dataRightsApi, "orgExports")
      .mockResolvedValue({ items: [], nextCursor: null });
    await renderInApp(<AdminPage />, { path: "/admin" });
    expect(
      await screen.findByRole("heading", { level: 1, name: "Data and privacy in Acme" }),
    ).toBeTruthy();
    expect(screen.getByRole("form", { name: "File an erasure request" })).toBeTruthy();
    expect(await screen.findByRole("heading", { name: "Export organization data" })).toBeTruthy();
    expect(exports).toHaveBeenCalledWith("org_1");
    cleanup();
    exports.mockClear();
    session.org = { id: "org_1", name: "Acme", role: "admin", createdAt: "x" };
    await renderInApp(<AdminPage />, { path: "/admin" });
    await screen.findByRole("form", { name: "File an erasure request" });
    expect(screen.queryByRole("heading", { name: "Export organization data" })).toBeNull();
    expect(exports).not.toHaveBeenCalled();
  });

  it("shows the name of what was just filed in the request list", async () => {
    vi.spyOn(membersApi, "members").mockResolvedValue({
      items: [
        {
          userId: "u1",
          email: "olive@example.com",
          name: "Olive Owner",
          role: "owner",
          joinedAt: "2026-11-29T00:00:00.000Z",
        },
        {
          userId: "u2",
          email: "ada@example.com",
          name: "Ada Lovelace",
          role: "member",
          joinedAt: "2026-11-29T00:00:00.000Z",
        },
      ],
      nextCursor: null,
    });
    const filed: ErasureRequest = {
      id: "erasure_9",
      orgId: "org_1",
      status: "completed",
      subject: { type: "member", hash: "h" },
      legalBasis: "GDPR Art. 17 (right to erasure)",
      reason: null,
      requestedBy: "u1",
      steps: [{ name: "d1", status: "done", at: null, detail: null }],
      verification: null,
      attempts: 1,
      createdAt: "2026-12-01T10:00:00.000Z",
      updatedAt: "2026-12-01T10:00:00.000Z",
      completedAt: "2026-12-01T10:01:00.000Z",
    };
    vi.spyOn(dataRightsApi, "erasureRequests")
      .mockResolvedValueOnce({ items: [], nextCursor: null })
      .mockResolvedValue({ items: [filed], nextCursor: null });
    vi.spyOn(dataRightsApi, "fileErasure").mockResolvedValue(filed);
    await renderInApp(<AdminPage />, { path: "/admin" });
    const region = screen.getByRole("region", { name: "Erasure requests" });
    await within(region).findByText("No erasure requests yet.");
    const form = screen.getByRole("form", { name: "File an erasure request" });
    const target = within(form).getByLabelText("What to erase") as HTMLSelectElement;
    await waitFor(() => expect(target.disabled).toBe(false));
    fireEvent.change(target, { target: { value: "u2" } });
    fireEvent.click(within(form).getByRole("button", { name: "File erasure request" }));
    const dialog = await screen.findByRole("alertdialog");
    fireEvent.change(within(dialog).getByLabelText(/to confirm/), {
      target: { value: "Ada Lovelace" },
    });
    fireEvent.click(within(dialog).getByRole("button", { name: "Erase member" }));
    const item = await within(region).findByRole("listitem", { name: "Ada Lovelace" });
    expect(item.textContent).toMatch(/by you/);
    expect(within(item).getByText("Account and memberships")).toBeTruthy();
  });
});

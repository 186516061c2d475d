import type { Member } from "@parley/shared";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api } from "../lib/api.ts";
import MembersPage from "./members-page.tsx";

vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({
    me: { id: "u1", email: "ada@example.com", name: "Ada", createdAt: "x", orgs: [] },
    org: { id: "org_1", name: "Acme", role: "owner", createdAt: "x" },
    reload: async () => {},
  }),
}));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const member = (userId: string, email: string, role: Member["role"]): Member => ({
  userId,
  email,
  name: email.split("@")[0] ?? email,
  role,
  joinedAt: "2026-11-29T00:00:00.000Z",
});

describe("MembersPage", () => {
  it("changes a role, and shows the server's last-owner refusal", async () => {
    vi.spyOn(api, "members").mockResolvedValue({
      items: [member("u1", "ada@example.com", "owner"), member("u2", "bob@example.com", "admin")],
      nextCursor: null,
    });
    const update = vi
      .spyOn(api, "updateMember")
      .mockRejectedValue(
        new ApiError(
          "conflict",
          "An organization needs at least one owner: add another owner first",
          409,
        ),
      );
    render(<MembersPage />);
    fireEvent.change(await screen.findByLabelText("Role of ada@example.com"), {
      target: { value: "member" },
    });
    expect((await screen.findByRole("alert")).textContent).toMatch(/at least one owner/);
    expect(update).toHaveBeenCalledWith("org_1", "u1", "member");
  });

  it("adds a member by email with a role", async () => {
    vi.spyOn(api, "members").mockResolvedValue({ items: [], nextCursor: null });
    const add = vi
      .spyOn(api, "addMember")
      .mockResolvedValue(member("u3", "cy@example.com", "admin"));
    render(<MembersPage />);
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: " cy@example.com " } });
    fireEvent.change(screen.getByLabelText("Role"), { target: { value: "admin" } });
    fireEvent.click(screen.getByRole("button", { name: "Add member" }));
    await waitFor(() =>
      expect(add).toHaveBeenCalledWith("org_1", { email: "cy@example.com", role: "admin" }),
    );
  });
});

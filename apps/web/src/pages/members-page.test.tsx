import { createInvitationSchema, type Member, type OrgSummary } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { toast } from "sonner";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../features/members/members-api.ts";
import { ApiError } from "../lib/api.ts";
import { answerEvery, describedText, refusedBody } from "../test/refusal.ts";
import { renderInApp } from "../test/render.tsx";
import MembersPage from "./members-page.tsx";

const session = vi.hoisted(() => ({
  org: { id: "org_1", name: "Acme", role: "owner", createdAt: "x" } as OrgSummary,
  reload: async () => {},
}));

vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({
    me: { id: "u1", email: "ada@example.com", name: "Ada Lovelace", createdAt: "x", orgs: [] },
    org: session.org,
    reload: session.reload,
  }),
  canManage: (org: OrgSummary | null) => org?.role === "owner" || org?.role === "admin",
}));

const member = (userId: string, name: string, role: Member["role"]): Member => ({
  userId,
  email: `${name.split(" ")[0]?.toLowerCase()}@example.com`,
  name,
  role,
  joinedAt: "2026-11-29T00:00:00.000Z",
});

const ada = member("u1", "Ada Lovelace", "owner");
const bob = member("u2", "Bob Babbage", "admin");
const cy = member("u3", "Cy Young", "member");
const owner2 = member("u4", "Dee Owner", "owner");

let reload: ReturnType<typeof vi.fn<() => Promise<void>>>;

beforeEach(() => {
  reload = vi.fn(async () => {});
  session.reload = reload;
  session.org = { id: "org_1", name: "Acme", role: "owner", createdAt: "x" };
  vi.spyOn(membersApi, "invitations").mockResolvedValue({ items: [], nextCursor: null });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const listMembers = (...items: Member[]) =>
  vi.spyOn(membersApi, "members").mockResolvedValue({ items, nextCursor: null });
/** A first page with more behind it: another owner may be there, so the server decides. */
const listFirstPage = (...items: Member[]) =>
  vi.spyOn(membersApi, "members").mockResolvedValue({ items, nextCursor: "more" });

describe("MembersPage", () => {
  it("scrolls the table inside its own box, not the page, on a phone", async () => {
    listMembers(ada, bob);
    await renderInApp(<MembersPage />, { path: "/members" });
    const table = await screen.findByRole("table", { name: "Members of Acme" });
    expect(table.parentElement?.className).toMatch(/overflow-x-auto/);
    // Without min-w-0 the grid cell grows to the table's width and the page scrolls sideways.
    expect(table.closest("section")?.className).toMatch(/min-w-0/);
    expect(screen.getAllByRole("columnheader").map((th) => th.textContent)).toEqual([
      "Name",
      "Email",
      "Role",
      "Joined",
      "Actions",
    ]);
  });

  it("lists each person as a card on a phone, with their role and action on screen", async () => {
    vi.spyOn(window, "matchMedia").mockImplementation(
      (query) =>
        ({
          matches: false,
          media: query,
          addEventListener: () => undefined,
          removeEventListener: () => undefined,
        }) as unknown as MediaQueryList,
    );
    listMembers(ada, bob);
    await renderInApp(<MembersPage />, { path: "/members" });
    const list = await screen.findByRole("list", { name: "Members of Acme" });
    expect(screen.queryByRole("table")).toBeNull();
    const bobCard = within(list)
      .getAllByRole("listitem")
      .find((item) => item.textContent?.includes("Bob Babbage"));
    expect(bobCard).toBeTruthy();
    const card = within(bobCard as HTMLElement);
    expect(card.getByText("bob@example.com")).toBeTruthy();
    expect(card.getByLabelText("Role of Bob Babbage")).toBeTruthy();
    expect(card.getByRole("button", { name: "Remove Bob Babbage" })).toBeTruthy();
  });

  it("asks before giving or taking away the owner role", async () => {
    listMembers(ada, bob, owner2);
    const update = vi
      .spyOn(membersApi, "updateMember")
      .mockImplementation(async (_org, userId, role) => ({ ...bob, userId, role }));
    await renderInApp(<MembersPage />, { path: "/members" });
    fireEvent.change(await screen.findByLabelText("Role of Bob Babbage"), {
      target: { value: "owner" },
    });
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toContain("Make Bob Babbage an owner?");
    expect(update).not.toHaveBeenCalled();
    fireEvent.click(within(dialog).getByRole("button", { name: "Make owner" }));
    await waitFor(() => expect(update).toHaveBeenCalledWith("org_1", "u2", "owner"));

    fireEvent.change(screen.getByLabelText("Role of Dee Owner"), { target: { value: "member" } });
    const demote = await screen.findByRole("alertdialog");
    expect(demote.textContent).toContain("Make Dee Owner a member?");
    fireEvent.click(within(demote).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(update).toHaveBeenCalledTimes(1);
  });

  it("removes a member only after a confirmation that names them", async () => {
    listMembers(ada, cy);
    const remove = vi.spyOn(membersApi, "removeMember").mockResolvedValue(undefined);
    const success = vi.spyOn(toast, "success");
    await renderInApp(<MembersPage />, { path: "/members" });
    fireEvent.click(await screen.findByRole("button", { name: "Remove Cy Young" }));
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toContain(
      "Remove Cy Young from Acme? They lose access at once; their sessions stay until erased.",
    );
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(remove).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole("button", { name: "Remove Cy Young" }));
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", {
        name: "Remove member",
      }),
    );
    await waitFor(() => expect(remove).toHaveBeenCalledWith("org_1", "u3"));
    await waitFor(() => expect(success).toHaveBeenCalledWith("Cy Young was removed from Acme."));
  });

  it("offers the only owner neither a role change nor Leave, and says why", async () => {
    listMembers(ada, bob);
    await renderInApp(<MembersPage />, { path: "/members" });
    await screen.findByLabelText("Role of Bob Babbage");
    expect(screen.queryByLabelText("Role of Ada Lovelace")).toBeNull();
    expect(screen.queryByRole("button", { name: "Leave" })).toBeNull();
    expect(screen.getByText("The only owner can't leave")).toBeTruthy();
  });

  it("changes a role with a select per row, and shows the server's last-owner refusal", async () => {
    listFirstPage(ada, bob);
    const update = vi
      .spyOn(membersApi, "updateMember")
      .mockResolvedValueOnce({ ...bob, role: "member" })
      .mockRejectedValueOnce(
        new ApiError(
          "conflict",
          "An organization needs at least one owner: add another owner first",
          409,
        ),
      );
    const success = vi.spyOn(toast, "success");
    await renderInApp(<MembersPage />, { path: "/members" });
    fireEvent.change(await screen.findByLabelText("Role of Bob Babbage"), {
      target: { value: "member" },
    });
    // Asked first (it applies at once), then done, said in a sentence.
    const asked = await screen.findByRole("alertdialog");
    expect(asked.textContent).toContain("Make Bob Babbage a member?");
    expect(update).not.toHaveBeenCalled();
    fireEvent.click(within(asked).getByRole("button", { name: "Change role" }));
    await waitFor(() => expect(update).toHaveBeenCalledWith("org_1", "u2", "member"));
    await waitFor(() => expect(success).toHaveBeenCalledWith("Bob Babbage is now a member."));
    expect(reload).not.toHaveBeenCalled();

    // The last owner demoting herself: asked first, then refused by the server.
    fireEvent.change(screen.getByLabelText("Role of Ada Lovelace"), {
      target: { value: "member" },
    });
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", {
        name: "Change my role",
      }),
    );
    expect((await screen.findByRole("alert")).textContent).toMatch(/at least one owner/);
    expect(update).toHaveBeenLastCalledWith("org_1", "u1", "member");
  });

  it("reloads the signed-in person after changing their own role, so the shell updates", async () => {
    session.org = { id: "org_1", name: "Acme", role: "owner", createdAt: "x" };
    listMembers(ada, owner2);
    vi.spyOn(membersApi, "updateMember").mockResolvedValue({ ...ada, role: "admin" });
    await renderInApp(<MembersPage />, { path: "/members" });
    fireEvent.change(await screen.findByLabelText("Role of Ada Lovelace"), {
      target: { value: "admin" },
    });
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", {
        name: "Change my role",
      }),
    );
    await waitFor(() => expect(reload).toHaveBeenCalledTimes(1));
  });

  it("gives an admin no control over owners and no owner role to grant", async () => {
    session.org = { id: "org_1", name: "Acme", role: "admin", createdAt: "x" };
    listMembers(owner2, bob, cy);
    await renderInApp(<MembersPage />, { path: "/members" });
    await screen.findByText("Dee Owner");
    expect(screen.queryByLabelText("Role of Dee Owner")).toBeNull();
    expect(screen.queryByRole("button", { name: "Remove Dee Owner" })).toBeNull();
    const cyRole = screen.getByLabelText("Role of Cy Young") as HTMLSelectElement;
    expect([...cyRole.options].map((option) => option.value)).toEqual(["admin", "member"]);
    expect(screen.getByRole("button", { name: "Remove Cy Young" })).toBeTruthy();
    const addRole = within(screen.getByRole("form", { name: "Add a member" })).getByLabelText(
      "Role",
    ) as HTMLSelectElement;
    expect([...addRole.options].map((option) => option.value)).toEqual(["admin", "member"]);
  });

  it("shows a member the list read-only, with only Leave", async () => {
    session.org = { id: "org_1", name: "Acme", role: "member", createdAt: "x" };
    listMembers({ ...ada, role: "member" }, bob);
    await renderInApp(<MembersPage />, { path: "/members" });
    await screen.findByText("Bob Babbage");
    expect(screen.queryAllByRole("combobox")).toEqual([]);
    expect(screen.queryByRole("button", { name: /Remove/ })).toBeNull();
    expect(screen.queryByRole("form", { name: "Add a member" })).toBeNull();
    expect(screen.getByRole("button", { name: "Leave" })).toBeTruthy();
  });

  it("leaves only after a confirmation, and shows why the last owner cannot", async () => {
    listFirstPage(ada, cy);
    const remove = vi
      .spyOn(membersApi, "removeMember")
      .mockRejectedValueOnce(
        new ApiError(
          "conflict",
          "An organization needs at least one owner: add another owner first",
          409,
        ),
      )
      .mockResolvedValueOnce(undefined);
    const { router } = await renderInApp(<MembersPage />, { path: "/members" });
    fireEvent.click(await screen.findByRole("button", { name: "Leave" }));
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toContain("Leave Acme?");
    expect(remove).not.toHaveBeenCalled();
    fireEvent.click(within(dialog).getByRole("button", { name: "Leave organization" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/at least one owner/);
    expect(reload).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole("button", { name: "Leave" }));
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", {
        name: "Leave organization",
      }),
    );
    await waitFor(() => expect(router.state.location.pathname).toBe("/projects"));
    expect(remove).toHaveBeenLastCalledWith("org_1", "u1");
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it("adds a member by email with a role: a link to send, whether or not they have an account", async () => {
    listMembers(ada);
    const add = vi.spyOn(membersApi, "invite").mockResolvedValue({
      id: "inv_2",
      orgId: "org_1",
      email: "eve@example.com",
      role: "admin",
      status: "pending",
      createdAt: "2026-12-02T00:00:00.000Z",
      expiresAt: "2026-12-09T00:00:00.000Z",
      url: "https://parley.test/invite#inv_eve",
    });
    const success = vi.spyOn(toast, "success");
    await renderInApp(<MembersPage />, { path: "/members" });
    const form = await screen.findByRole("form", { name: "Add a member" });
    fireEvent.change(within(form).getByLabelText("Email"), {
      target: { value: " eve@example.com " },
    });
    fireEvent.change(within(form).getByLabelText("Role"), { target: { value: "admin" } });
    fireEvent.click(within(form).getByRole("button", { name: "Add member" }));
    await waitFor(() =>
      expect(add).toHaveBeenCalledWith("org_1", { email: "eve@example.com", role: "admin" }),
    );
    await waitFor(() =>
      expect(success).toHaveBeenCalledWith(
        "Invitation for eve@example.com to join Acme made: send them the link.",
      ),
    );
    expect(
      ((await within(form).findByLabelText("Invitation link")) as HTMLInputElement).value,
    ).toBe("https://parley.test/invite#inv_eve");
  });

  it("shows both problems of a refused invitation, each at its field", async () => {
    listMembers(ada);
    answerEvery(400, refusedBody(createInvitationSchema, { email: "eve@", role: "boss" }));
    await renderInApp(<MembersPage />, { path: "/members" });
    const form = await screen.findByRole("form", { name: "Add a member" });
    const email = within(form).getByLabelText("Email");
    const role = within(form).getByLabelText("Role");
    fireEvent.change(email, { target: { value: "eve@example.com" } });
    fireEvent.click(within(form).getByRole("button", { name: "Add member" }));
    await waitFor(() => expect(describedText(email)).toBe("Must be a valid email address."));
    expect(email.getAttribute("aria-invalid")).toBe("true");
    expect(role.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(role)).toBe("Must be owner, admin or member.");
    expect(within(form).queryByRole("alert")).toBeNull();
  });

  it("invites an email that has no account yet, shows the link once, and lists it as pending", async () => {
    listMembers(ada);
    const invitation = {
      id: "inv_1",
      orgId: "org_1",
      email: "newcomer@example.com",
      role: "member" as const,
      status: "pending" as const,
      createdAt: "2026-12-02T00:00:00.000Z",
      expiresAt: "2026-12-09T00:00:00.000Z",
    };
    const invite = vi
      .spyOn(membersApi, "invite")
      .mockResolvedValue({ ...invitation, url: "https://parley.test/invite#inv_secret" });
    const list = vi
      .spyOn(membersApi, "invitations")
      .mockResolvedValueOnce({ items: [], nextCursor: null })
      .mockResolvedValue({ items: [invitation], nextCursor: null });
    const revoke = vi
      .spyOn(membersApi, "revokeInvitation")
      .mockResolvedValue({ ...invitation, status: "revoked" });
    await renderInApp(<MembersPage />, { path: "/members" });
    const form = await screen.findByRole("form", { name: "Add a member" });
    fireEvent.change(within(form).getByLabelText("Email"), {
      target: { value: "newcomer@example.com" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Add member" }));
    await waitFor(() =>
      expect(invite).toHaveBeenCalledWith("org_1", {
        email: "newcomer@example.com",
        role: "member",
      }),
    );
    expect(
      ((await within(form).findByLabelText("Invitation link")) as HTMLInputElement).value,
    ).toBe("https://parley.test/invite#inv_secret");
    // No error shown for the missing account: the invitation is the answer.
    expect(within(form).queryByRole("alert")).toBeNull();
    // Listed as pending, and revocable.
    fireEvent.click(
      await screen.findByRole("button", { name: "Revoke the invitation of newcomer@example.com" }),
    );
    await waitFor(() => expect(revoke).toHaveBeenCalledWith("org_1", "inv_1"));
    expect(list).toHaveBeenCalled();
  });
});

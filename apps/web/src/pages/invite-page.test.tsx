import { signupSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../features/members/members-api.ts";
import { ApiError, api } from "../lib/api.ts";
import { answerEvery, describedText, refusedBody } from "../test/refusal.ts";
import { renderInApp } from "../test/render.tsx";
import InvitePage, { InviteScreen } from "./invite-page.tsx";

const session = vi.hoisted(() => ({
  me: null as null | { id: string; email: string; name: string; createdAt: string; orgs: [] },
  reload: vi.fn(async () => {}),
  selectOrg: vi.fn(),
}));

vi.mock("../lib/session.tsx", () => ({
  useSession: () => session,
}));

const preview = {
  orgName: "Acme",
  email: "newcomer@example.com",
  role: "admin" as const,
  expiresAt: "2026-12-09T00:00:00.000Z",
};

afterEach(() => {
  cleanup();
  sessionStorage.clear();
  vi.restoreAllMocks();
  session.me = null;
});

describe("the invitation page", () => {
  it("signs a visitor up on the invitation itself: the email locked, no org of their own, one click to join", async () => {
    vi.spyOn(membersApi, "invitationPreview").mockResolvedValue(preview);
    const signup = vi.spyOn(api, "signup").mockResolvedValue({
      accessToken: "t",
      user: { id: "u1", email: preview.email, name: "Newcomer" },
    } as never);
    const accept = vi
      .spyOn(membersApi, "acceptInvitation")
      .mockResolvedValue({ orgId: "org_9", role: "admin" });
    const { router } = await renderInApp(<InviteScreen secret="inv_abc" />, {
      path: "/invite#inv_abc",
    });
    expect(await screen.findByRole("heading", { level: 1, name: "Join Acme" })).toBeTruthy();
    const form = screen.getByRole("form", { name: "Join Acme" });
    const email = screen.getByLabelText(/^Email/) as HTMLInputElement;
    expect(email.value).toBe("newcomer@example.com");
    expect(email.readOnly).toBe(true);
    // No organization name: they join this one.
    expect(screen.queryByLabelText(/Organization name/)).toBeNull();
    expect(screen.queryByRole("link", { name: /Sign up/ })).toBeNull();
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "Newcomer" } });
    fireEvent.change(screen.getByLabelText(/^Password/), {
      target: { value: "correct horse battery" },
    });
    fireEvent.submit(form);
    await waitFor(() => expect(router.state.location.pathname).toBe("/projects"));
    expect(signup).toHaveBeenCalledWith({
      email: "newcomer@example.com",
      password: "correct horse battery",
      name: "Newcomer",
      invitation: "inv_abc",
    });
    expect(accept).toHaveBeenCalledWith("inv_abc");
    expect(session.selectOrg).toHaveBeenCalledWith("org_9");
    expect(screen.getByRole("link", { name: "Sign in to join" }).getAttribute("href")).toBe(
      "/signin?next=%2Finvite",
    );
  });

  it("shows every problem of a refused sign-up at its field, the link's own in the alert", async () => {
    vi.spyOn(membersApi, "invitationPreview").mockResolvedValue(preview);
    const accept = vi.spyOn(membersApi, "acceptInvitation");
    const refused = refusedBody(signupSchema, {
      email: preview.email,
      name: " ",
      password: "long enough \uD800",
      invitation: "inv_abc",
    });
    answerEvery(400, {
      error: {
        ...refused.error,
        issues: [
          ...(refused.error.issues ?? []),
          { field: "invitation", message: "Too big: expected string to have <=200 characters" },
        ],
      },
    });
    await renderInApp(<InviteScreen secret="inv_abc" />, { path: "/invite#inv_abc" });
    const form = await screen.findByRole("form", { name: "Join Acme" });
    const name = within(form).getByLabelText("Name");
    const password = within(form).getByLabelText(/^Password/);
    fireEvent.change(name, { target: { value: " " } });
    fireEvent.change(password, { target: { value: "long enough \uD800" } });
    fireEvent.submit(form);
    await waitFor(() => expect(describedText(name)).toBe("Is required."));
    expect(describedText(password)).toBe(
      "Must be valid Unicode text (it has an unpaired surrogate).",
    );
    expect(within(form).getByRole("alert").textContent).toBe(
      "The invitation must be at most 200 characters.",
    );
    expect(accept).not.toHaveBeenCalled();
  });

  it("lets the invited person join, then opens the org's projects", async () => {
    session.me = {
      id: "u1",
      email: "newcomer@example.com",
      name: "N",
      createdAt: "x",
      orgs: [],
    };
    vi.spyOn(membersApi, "invitationPreview").mockResolvedValue(preview);
    const accept = vi
      .spyOn(membersApi, "acceptInvitation")
      .mockResolvedValue({ orgId: "org_9", role: "admin" });
    const { router } = await renderInApp(<InviteScreen secret="inv_abc" />, {
      path: "/invite#inv_abc",
    });
    fireEvent.click(await screen.findByRole("button", { name: "Join Acme" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/projects"));
    expect(accept).toHaveBeenCalledWith("inv_abc");
    expect(session.selectOrg).toHaveBeenCalledWith("org_9");
  });

  it("says a used or revoked link is over, and an unknown one is not valid", async () => {
    vi.spyOn(membersApi, "invitationPreview").mockRejectedValue(
      new ApiError("gone", "This invitation was revoked", 410),
    );
    await renderInApp(<InviteScreen secret="inv_abc" />, { path: "/invite#inv_abc" });
    expect((await screen.findByRole("alert")).textContent).toMatch(/revoked.*new link/);
  });

  it("reads the secret from the link's fragment, and keeps it in the tab for the way back from sign-in", async () => {
    const read = vi.spyOn(membersApi, "invitationPreview").mockResolvedValue(preview);
    await renderInApp(<InvitePage />, { path: "/invite#inv_frag" });
    await screen.findByRole("heading", { level: 1, name: "Join Acme" });
    expect(read).toHaveBeenCalledWith("inv_frag");
    // The sign-in link carries no secret: it waits in this tab.
    expect(
      screen.getByRole("link", { name: "Sign in to join" }).getAttribute("href"),
    ).not.toContain("inv_");
    cleanup();
    read.mockClear();
    await renderInApp(<InvitePage />, { path: "/invite" });
    await screen.findByRole("heading", { level: 1, name: "Join Acme" });
    expect(read).toHaveBeenCalledWith("inv_frag");
  });

  it("moves a first-form link's secret out of the path, into the fragment", async () => {
    vi.spyOn(membersApi, "invitationPreview").mockResolvedValue(preview);
    const { router } = await renderInApp(<InvitePage />, { path: "/invite/inv_old" });
    await waitFor(() => expect(router.state.location.pathname).toBe("/invite"));
    expect(router.state.location.hash).toBe("inv_old");
  });
});

import { cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mailApi } from "../lib/mail-api.ts";
import { renderInApp } from "../test/render.tsx";
import VerifyEmailPage from "./verify-email-page.tsx";

const session = vi.hoisted(() => ({
  me: null as { id: string } | null | undefined,
  reload: vi.fn(async () => {}),
}));
vi.mock("../lib/session.tsx", () => ({ useSession: () => session }));

afterEach(() => {
  cleanup();
  session.me = null;
  session.reload.mockClear();
  vi.restoreAllMocks();
  window.history.replaceState(null, "", "/");
});

async function confirmWith(answer: { changed: boolean; signupGrant: boolean }) {
  window.history.replaceState(null, "", `/verify-email#vfy_${"A".repeat(43)}`);
  const verify = vi
    .spyOn(mailApi, "verifyEmail")
    .mockResolvedValue({ email: "ivy@example.com", ...answer });
  await renderInApp(<VerifyEmailPage />, { path: "/verify-email" });
  // The secret left the address bar as the page read it; a click uses it.
  expect(window.location.hash).toBe("");
  fireEvent.click(screen.getByRole("button", { name: "Confirm my address" }));
  await screen.findByRole("heading", { name: "Email address confirmed" });
  expect(verify).toHaveBeenCalledWith(`vfy_${"A".repeat(43)}`);
  return screen.getByText(/is confirmed/).textContent ?? "";
}

describe("the verification page", () => {
  it("says the free credits are on their way only when this link gave them", async () => {
    expect(await confirmWith({ changed: false, signupGrant: true })).toContain(
      "free credits are on their way",
    );
    cleanup();
    // An invitee, or a person who had the grant already: confirmed, and no credits promised.
    expect(await confirmWith({ changed: false, signupGrant: false })).not.toContain("credits");
  });

  it("reads who they are again when the page's own read had not answered yet, not only when signed in", async () => {
    // Opened from the mail, the page's read of who is signed in is still under way (me
    // undefined) when they click: that read left before the address was confirmed.
    session.me = undefined;
    await confirmWith({ changed: false, signupGrant: true });
    expect(session.reload).toHaveBeenCalledTimes(1);
  });

  it("does not read again for a visitor known to be signed out", async () => {
    await confirmWith({ changed: false, signupGrant: false });
    expect(session.reload).not.toHaveBeenCalled();
  });
});

import type { Me } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { mailApi } from "../lib/mail-api.ts";
import { renderInApp } from "../test/render.tsx";
import { VerifyBanner } from "./verify-banner.tsx";

const session = vi.hoisted(() => ({ me: null as Me | null }));
vi.mock("../lib/session.tsx", () => ({ useSession: () => session }));

const unverified = (signupGrantWaits: boolean): Me => ({
  id: "u1",
  email: "ivy@example.com",
  name: "Ivy",
  createdAt: "x",
  orgs: [],
  emailVerified: false,
  signupGrantWaits,
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("the unverified-account banner", () => {
  it("promises the sign-up credits only when proving the address brings them", async () => {
    session.me = unverified(true);
    await renderInApp(<VerifyBanner />);
    const banner = screen.getByRole("region", { name: "Confirm your email address" });
    expect(banner.textContent).toContain("ivy@example.com");
    expect(banner.textContent).toContain("free credits arrive then");
    cleanup();
    // An invitee (signed up through an invitation: no org of their own) has none coming.
    session.me = unverified(false);
    await renderInApp(<VerifyBanner />);
    const invitee = screen.getByRole("region", { name: "Confirm your email address" });
    expect(invitee.textContent).toContain("ivy@example.com");
    expect(invitee.textContent).not.toContain("credits");
  });

  it("mails a new link on demand, and is not there for a verified account", async () => {
    session.me = unverified(false);
    const resend = vi.spyOn(mailApi, "resendVerification").mockResolvedValue({ accepted: true });
    await renderInApp(<VerifyBanner />);
    fireEvent.click(screen.getByRole("button", { name: "Send the link again" }));
    await waitFor(() => expect(screen.getByRole("status").textContent).toMatch(/on its way/));
    expect(resend).toHaveBeenCalledOnce();
    cleanup();
    session.me = { ...unverified(false), emailVerified: true };
    await renderInApp(<VerifyBanner />);
    expect(screen.queryByRole("region", { name: "Confirm your email address" })).toBeNull();
  });
});

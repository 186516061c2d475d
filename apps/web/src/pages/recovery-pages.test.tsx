import { passwordResetConfirmSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { answerEvery, describedText, refusedBody } from "../test/refusal.ts";
import { renderInApp } from "../test/render.tsx";
import { ResetPasswordPage } from "./recovery-pages.tsx";

const session = vi.hoisted(() => ({ me: null, signOut: vi.fn(async () => {}) }));
vi.mock("../lib/session.tsx", () => ({ useSession: () => session }));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("ResetPasswordPage", () => {
  it("shows the password's problem at it and the link's, which has no field here, in the alert", async () => {
    window.location.hash = "#rst_short";
    answerEvery(
      400,
      refusedBody(passwordResetConfirmSchema, { token: "rst_short", password: "short" }),
    );
    await renderInApp(<ResetPasswordPage />, { path: "/reset-password" });
    const form = screen.getByRole("form", { name: "Set a new password" });
    const password = within(form).getByLabelText(/^New password/);
    fireEvent.change(password, { target: { value: "long enough?" } });
    fireEvent.change(within(form).getByLabelText("The same password again"), {
      target: { value: "long enough?" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Set the new password" }));
    await waitFor(() => expect(describedText(password)).toBe("Must be at least 10 characters."));
    expect(password.getAttribute("aria-invalid")).toBe("true");
    expect((await within(form).findByRole("alert")).textContent).toBe(
      "The token must be the password reset link's code.",
    );
  });

  it("says two different passwords in the alert, asking nothing of the server", async () => {
    window.location.hash = "#rst_x";
    const fetch = answerEvery(500, {});
    await renderInApp(<ResetPasswordPage />, { path: "/reset-password" });
    const form = screen.getByRole("form", { name: "Set a new password" });
    fireEvent.change(within(form).getByLabelText(/^New password/), {
      target: { value: "long enough?" },
    });
    fireEvent.change(within(form).getByLabelText("The same password again"), {
      target: { value: "long enough!" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Set the new password" }));
    expect((await within(form).findByRole("alert")).textContent).toBe(
      "The two passwords are not the same.",
    );
    expect(fetch).not.toHaveBeenCalled();
  });
});

import { signupSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { answerEvery, describedText, refusedBody } from "../test/refusal.ts";
import { renderInApp } from "../test/render.tsx";
import { SignInPage, SignUpPage } from "./auth-page.tsx";

const session = vi.hoisted(() => ({ reload: vi.fn(async () => {}) }));
vi.mock("../lib/session.tsx", () => ({ useSession: () => session }));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  session.reload.mockClear();
});

describe("signing up and in", () => {
  it("shows every problem of the API's refusal of a sign-up, each at its field", async () => {
    const typed = {
      name: "\u202EAda",
      email: "ada@example.com",
      password: "long enough \uD800",
      orgName: "Engines\u0007",
    };
    answerEvery(400, refusedBody(signupSchema, typed));
    await renderInApp(<SignUpPage />, { path: "/signup" });
    const form = screen.getByRole("form", { name: "Sign up" });
    const box = (label: string | RegExp) => within(form).getByLabelText(label);
    fireEvent.change(box("Name"), { target: { value: typed.name } });
    fireEvent.change(box("Email"), { target: { value: typed.email } });
    fireEvent.change(box(/^Password/), { target: { value: typed.password } });
    fireEvent.change(box("Organization name (optional)"), { target: { value: typed.orgName } });
    fireEvent.click(within(form).getByRole("button", { name: "Sign up" }));
    await waitFor(() => expect(box("Name").getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(box("Name"))).toMatch(
      /^Must not contain bidirectional control characters \(.*\)\.$/,
    );
    expect(describedText(box(/^Password/))).toBe(
      "Must be valid Unicode text (it has an unpaired surrogate).",
    );
    expect(describedText(box("Organization name (optional)"))).toBe(
      "Must be a single line without control characters (no tabs or line breaks).",
    );
    expect(box("Email").getAttribute("aria-invalid")).toBeNull();
    expect(within(form).queryByRole("alert")).toBeNull();
    expect(session.reload).not.toHaveBeenCalled();
  });

  it("says an address taken at the email, and a refused sign-in in the alert", async () => {
    answerEvery(409, {
      error: {
        code: "conflict",
        message: "An account with this email already exists",
        field: "email",
      },
    });
    await renderInApp(<SignUpPage />, { path: "/signup" });
    const signup = screen.getByRole("form", { name: "Sign up" });
    fireEvent.change(within(signup).getByLabelText("Name"), { target: { value: "Ada" } });
    fireEvent.change(within(signup).getByLabelText("Email"), {
      target: { value: "ada@example.com" },
    });
    fireEvent.change(within(signup).getByLabelText(/^Password/), {
      target: { value: "a long password" },
    });
    fireEvent.click(within(signup).getByRole("button", { name: "Sign up" }));
    const email = within(signup).getByLabelText("Email");
    await waitFor(() =>
      expect(describedText(email)).toBe("An account with this email already exists."),
    );
    cleanup();

    answerEvery(401, { error: { code: "unauthorized", message: "Invalid email or password" } });
    await renderInApp(<SignInPage />, { path: "/signin" });
    const signin = screen.getByRole("form", { name: "Sign in" });
    fireEvent.change(within(signin).getByLabelText("Email"), {
      target: { value: "ada@example.com" },
    });
    fireEvent.change(within(signin).getByLabelText(/^Password/), { target: { value: "wrong" } });
    fireEvent.click(within(signin).getByRole("button", { name: "Sign in" }));
    expect((await within(signin).findByRole("alert")).textContent).toBe(
      "Invalid email or password.",
    );
  });
});

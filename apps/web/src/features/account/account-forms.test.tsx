import { changeEmailSchema, changePasswordSchema, type Me, updateMeSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api } from "../../lib/api.ts";
import { mailApi } from "../../lib/mail-api.ts";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { EmailForm, PasswordForm, ProfileForm } from "./account-forms.tsx";

const me: Me = {
  id: "u1",
  email: "ada@example.com",
  name: "Ada",
  createdAt: "x",
  orgs: [],
  emailVerified: true,
  signupGrantWaits: false,
};

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("the account forms", () => {
  it("saves a new name, and shows whether the address is verified", async () => {
    const update = vi.spyOn(api, "updateMe").mockResolvedValue(me);
    const saved = vi.fn(async () => {});
    await renderInApp(<ProfileForm me={me} onSaved={saved} />);
    const form = screen.getByRole("form", { name: "Profile" });
    expect(within(form).getByText("Verified")).toBeTruthy();
    fireEvent.change(within(form).getByLabelText("Name"), { target: { value: "Ada King" } });
    fireEvent.click(within(form).getByRole("button", { name: "Save profile" }));
    await waitFor(() => expect(update).toHaveBeenLastCalledWith({ name: "Ada King" }));
    expect(saved).toHaveBeenCalled();
  });

  it("changes the email by a mailed link, refusing its own address before asking the server", async () => {
    const change = vi
      .spyOn(mailApi, "changeEmail")
      .mockRejectedValueOnce(new ApiError("forbidden", "The current password is not right", 403))
      .mockResolvedValue({ accepted: true });
    await renderInApp(<EmailForm me={me} />);
    const form = screen.getByRole("form", { name: "Change email" });
    const fill = (newEmail: string, password: string) => {
      fireEvent.change(within(form).getByLabelText("New email"), { target: { value: newEmail } });
      fireEvent.change(within(form).getByLabelText("Current password"), {
        target: { value: password },
      });
      fireEvent.click(within(form).getByRole("button", { name: "Send the link" }));
    };
    fill("ADA@example.com", "pw");
    const newEmail = within(form).getByLabelText("New email");
    await waitFor(() => expect(describedText(newEmail)).toBe("This is your address already."));
    expect(newEmail.getAttribute("aria-invalid")).toBe("true");
    expect(change).not.toHaveBeenCalled();
    fill("ada@king.example", "wrong");
    expect((await within(form).findByRole("alert")).textContent).toMatch(/not right/);
    fill("ada@king.example", "the password");
    await waitFor(() =>
      expect(change).toHaveBeenLastCalledWith({
        newEmail: "ada@king.example",
        password: "the password",
      }),
    );
    expect((await screen.findByRole("status")).textContent).toMatch(/ada@king\.example/);
  });

  it("changes the password, and shows the server's refusal of a wrong current one", async () => {
    const change = vi
      .spyOn(api, "changePassword")
      .mockRejectedValueOnce(new ApiError("forbidden", "The current password is not right", 403))
      .mockResolvedValue(undefined);
    await renderInApp(<PasswordForm />);
    const form = screen.getByRole("form", { name: "Change password" });
    fireEvent.change(within(form).getByLabelText("Current password"), {
      target: { value: "wrong" },
    });
    fireEvent.change(within(form).getByLabelText("New password"), {
      target: { value: "another long password" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));
    expect((await within(form).findByRole("alert")).textContent).toMatch(/not right/);
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));
    await waitFor(() => expect(change).toHaveBeenCalledTimes(2));
    expect(change).toHaveBeenLastCalledWith({
      currentPassword: "wrong",
      newPassword: "another long password",
    });
  });

  it("shows every problem of the API's refusal of a new password, each at its field", async () => {
    // What the API answers, run through the real client: zod's words for both fields.
    answerEvery(
      400,
      refusedBody(changePasswordSchema, {
        currentPassword: "x".repeat(257),
        newPassword: "long enough \uD800",
      }),
    );
    await renderInApp(<PasswordForm />);
    const form = screen.getByRole("form", { name: "Change password" });
    const current = within(form).getByLabelText("Current password");
    const next = within(form).getByLabelText("New password");
    fireEvent.change(current, { target: { value: "x".repeat(257) } });
    fireEvent.change(next, { target: { value: "long enough \uD800" } });
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));
    await waitFor(() => expect(current.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(current)).toBe("Must be at most 256 characters.");
    expect(next.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(next)).toBe("Must be valid Unicode text (it has an unpaired surrogate).");
    // Both are at their fields, and the first is where the cursor goes.
    expect(document.activeElement).toBe(current);
    expect(within(form).queryByRole("alert")).toBeNull();
  });

  it("shows both problems of an email change at their fields, and focuses the first", async () => {
    answerEvery(
      400,
      refusedBody(changeEmailSchema, { newEmail: "ada@", password: "p".repeat(257) }),
    );
    await renderInApp(<EmailForm me={me} />);
    const form = screen.getByRole("form", { name: "Change email" });
    const newEmail = within(form).getByLabelText("New email");
    const password = within(form).getByLabelText("Current password");
    fireEvent.change(newEmail, { target: { value: "ada@king.example" } });
    fireEvent.change(password, { target: { value: "the password" } });
    fireEvent.click(within(form).getByRole("button", { name: "Send the link" }));
    await waitFor(() => expect(describedText(newEmail)).toBe("Must be a valid email address."));
    expect(describedText(password)).toBe("Must be at most 256 characters.");
    expect(password.getAttribute("aria-invalid")).toBe("true");
    expect(document.activeElement).toBe(newEmail);
  });

  it("says a wrong current password at that field, in a sentence", async () => {
    answerEvery(403, {
      error: {
        code: "forbidden",
        message: "The current password is not right",
        field: "currentPassword",
      },
    });
    await renderInApp(<PasswordForm />);
    const form = screen.getByRole("form", { name: "Change password" });
    const current = within(form).getByLabelText("Current password");
    fireEvent.change(current, { target: { value: "wrong" } });
    fireEvent.change(within(form).getByLabelText("New password"), {
      target: { value: "another long password" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));
    await waitFor(() => expect(describedText(current)).toBe("The current password is not right."));
    expect(within(form).queryByRole("alert")).toBeNull();
  });

  it("says the API's refusal of a name at the name", async () => {
    answerEvery(400, refusedBody(updateMeSchema, { name: "Ada\u200F" }));
    await renderInApp(<ProfileForm me={me} onSaved={async () => {}} />);
    const form = screen.getByRole("form", { name: "Profile" });
    const name = within(form).getByLabelText("Name");
    fireEvent.change(name, { target: { value: "Ada\u200F" } });
    fireEvent.click(within(form).getByRole("button", { name: "Save profile" }));
    await waitFor(() => expect(name.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(name)).toMatch(/^Must not contain bidirectional control characters .*\.$/);
    expect(within(form).queryByRole("alert")).toBeNull();
  });
});

import type { Me } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api } from "../../lib/api.ts";
import { renderInApp } from "../../test/render.tsx";
import { PasswordForm, ProfileForm } from "./account-forms.tsx";

const me: Me = { id: "u1", email: "ada@example.com", name: "Ada", createdAt: "x", orgs: [] };

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("the account forms", () => {
  it("saves a new name, and asks for the password only when the email changes", async () => {
    const update = vi.spyOn(api, "updateMe").mockResolvedValue(me);
    const saved = vi.fn(async () => {});
    await renderInApp(<ProfileForm me={me} onSaved={saved} />);
    const form = screen.getByRole("form", { name: "Profile" });
    fireEvent.change(within(form).getByLabelText("Name"), { target: { value: "Ada King" } });
    expect(within(form).queryByLabelText(/Current password/)).toBeNull();
    fireEvent.click(within(form).getByRole("button", { name: "Save profile" }));
    await waitFor(() => expect(update).toHaveBeenLastCalledWith({ name: "Ada King" }));
    expect(saved).toHaveBeenCalled();

    fireEvent.change(within(form).getByLabelText("Email"), {
      target: { value: "ada@king.example" },
    });
    fireEvent.change(within(form).getByLabelText(/Current password/), {
      target: { value: "the password" },
    });
    fireEvent.click(within(form).getByRole("button", { name: "Save profile" }));
    await waitFor(() =>
      expect(update).toHaveBeenLastCalledWith({
        name: "Ada King",
        email: "ada@king.example",
        currentPassword: "the password",
      }),
    );
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
});

import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api } from "../../lib/api.ts";
import { DeleteAccount } from "./delete-account.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("DeleteAccount", () => {
  it("asks for the email before deleting, and shows the 409 refusal", async () => {
    const remove = vi
      .spyOn(api, "deleteAccount")
      .mockRejectedValue(
        new ApiError("conflict", 'You are the only owner of "Acme", which has other members', 409),
      );
    render(<DeleteAccount email="ada@example.com" />);
    fireEvent.click(screen.getByRole("button", { name: "Delete my account" }));
    const confirm = screen.getByRole("button", { name: "Delete my account permanently" });
    expect((confirm as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByLabelText("Your email"), { target: { value: "Ada@example.com" } });
    expect((confirm as HTMLButtonElement).disabled).toBe(false);
    fireEvent.click(confirm);
    expect((await screen.findByRole("alert")).textContent).toMatch(/only owner of "Acme"/);
    expect(remove).toHaveBeenCalledOnce();
  });
});

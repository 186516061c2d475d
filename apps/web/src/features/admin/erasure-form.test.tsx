import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api, type ErasureRequest } from "../../lib/api.ts";
import { ErasureForm, validateErasure } from "./erasure-form.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("validateErasure", () => {
  it("trims the id and drops an empty reason", () => {
    expect(validateErasure({ type: "project", id: " prj_1 ", reason: " " })).toEqual({
      ok: true,
      input: { subject: { type: "project", id: "prj_1" } },
    });
  });

  it("refuses an unknown type, an empty or long id, and a long reason", () => {
    expect(validateErasure({ type: "org", id: "x", reason: "" })).toMatchObject({
      ok: false,
      field: "type",
    });
    expect(validateErasure({ type: "member", id: "  ", reason: "" })).toMatchObject({
      ok: false,
      field: "id",
    });
    expect(validateErasure({ type: "member", id: "x".repeat(101), reason: "" })).toMatchObject({
      ok: false,
      field: "id",
    });
    expect(validateErasure({ type: "member", id: "u1", reason: "r".repeat(501) })).toMatchObject({
      ok: false,
      field: "reason",
    });
  });
});

describe("ErasureForm", () => {
  it("does not file a request without an id", async () => {
    const file = vi.spyOn(api, "fileErasure");
    render(<ErasureForm orgId="org_1" onFiled={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "File erasure request" }));
    expect((await screen.findByRole("alert")).textContent).toBe("Enter the id of what to erase");
    expect(screen.getByLabelText("Id").getAttribute("aria-invalid")).toBe("true");
    expect(file).not.toHaveBeenCalled();
  });

  it("files a valid request and shows the server's refusal", async () => {
    const file = vi
      .spyOn(api, "fileErasure")
      .mockResolvedValueOnce({ id: "er_1" } as ErasureRequest)
      .mockRejectedValueOnce(
        new ApiError("conflict", "The last owner cannot be erased: add another owner first", 409),
      );
    const onFiled = vi.fn();
    render(<ErasureForm orgId="org_1" onFiled={onFiled} />);
    fireEvent.change(screen.getByLabelText("What to erase"), { target: { value: "member" } });
    fireEvent.change(screen.getByLabelText("Id"), { target: { value: "usr_1" } });
    fireEvent.change(screen.getByLabelText(/Reason/), { target: { value: "asked by email" } });
    fireEvent.click(screen.getByRole("button", { name: "File erasure request" }));
    await waitFor(() => expect(onFiled).toHaveBeenCalledWith({ id: "er_1" }));
    expect(file).toHaveBeenCalledWith("org_1", {
      subject: { type: "member", id: "usr_1" },
      reason: "asked by email",
    });

    fireEvent.change(screen.getByLabelText("Id"), { target: { value: "usr_owner" } });
    fireEvent.click(screen.getByRole("button", { name: "File erasure request" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/last owner/);
  });
});

import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type BillingSettings } from "../../lib/api.ts";
import { formFromSettings, limitsPatch, microsToDollarsInput } from "./limits.ts";
import { LimitsForm } from "./limits-form.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const none: BillingSettings = {
  orgMonthlyLimitMicros: null,
  memberDailyLimitMicros: null,
  lowBalanceMicros: null,
  alertWebhookUrl: null,
};

describe("microsToDollarsInput", () => {
  it("shows whole dollars, cents, and sub-cent limits exactly", () => {
    expect(microsToDollarsInput(null)).toBe("");
    expect(microsToDollarsInput(50_000_000)).toBe("50");
    expect(microsToDollarsInput(12_500_000)).toBe("12.50");
    expect(microsToDollarsInput(70_000)).toBe("0.07");
    expect(microsToDollarsInput(1_234_500)).toBe("1.2345");
  });
});

describe("limitsPatch", () => {
  it("sends dollars as integer micros, and only what changed", () => {
    const form = { ...formFromSettings(none), orgMonthlyLimitMicros: "$250.75" };
    expect(limitsPatch(form, none)).toEqual({
      ok: true,
      patch: { orgMonthlyLimitMicros: 250_750_000 },
    });
  });

  it("turns an emptied field into null, which removes the limit", () => {
    const current = {
      ...none,
      memberDailyLimitMicros: 5_000_000,
      alertWebhookUrl: "https://a.b/h",
    };
    const form = { ...formFromSettings(current), memberDailyLimitMicros: " ", alertWebhookUrl: "" };
    expect(limitsPatch(form, current)).toEqual({
      ok: true,
      patch: { memberDailyLimitMicros: null, alertWebhookUrl: null },
    });
  });

  it("keeps a sub-cent limit it did not touch", () => {
    const current = { ...none, lowBalanceMicros: 1_234_500 };
    const form = { ...formFromSettings(current), orgMonthlyLimitMicros: "10" };
    expect(limitsPatch(form, current)).toEqual({
      ok: true,
      patch: { orgMonthlyLimitMicros: 10_000_000 },
    });
  });

  it("refuses zero, fractions of a cent, junk and non-http URLs", () => {
    const base = formFromSettings(none);
    for (const text of ["0", "1.005", "ten", "-3"]) {
      expect(limitsPatch({ ...base, lowBalanceMicros: text }, none)).toMatchObject({
        ok: false,
        field: "lowBalanceMicros",
      });
    }
    expect(limitsPatch({ ...base, alertWebhookUrl: "ftp://x.y" }, none)).toMatchObject({
      ok: false,
      field: "alertWebhookUrl",
    });
  });
});

describe("LimitsForm", () => {
  it("saves the changed limit in micros and shows the server's values", async () => {
    const update = vi
      .spyOn(api, "updateBillingSettings")
      .mockResolvedValue({ ...none, orgMonthlyLimitMicros: 100_000_000 });
    const onSaved = vi.fn();
    render(<LimitsForm orgId="org_1" settings={none} onSaved={onSaved} />);
    fireEvent.change(screen.getByLabelText(/Monthly limit/), { target: { value: "100" } });
    fireEvent.click(screen.getByRole("button", { name: "Save settings" }));
    await waitFor(() => expect(screen.getByRole("status").textContent).toBe("Settings saved."));
    expect(update).toHaveBeenCalledWith("org_1", { orgMonthlyLimitMicros: 100_000_000 });
    expect(onSaved).toHaveBeenCalledWith({ ...none, orgMonthlyLimitMicros: 100_000_000 });
  });

  it("marks an invalid amount and sends nothing", async () => {
    const update = vi.spyOn(api, "updateBillingSettings");
    render(<LimitsForm orgId="org_1" settings={none} onSaved={() => {}} />);
    const input = screen.getByLabelText(/Daily limit/);
    fireEvent.change(input, { target: { value: "1.999" } });
    fireEvent.click(screen.getByRole("button", { name: "Save settings" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/dollars above zero/);
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(update).not.toHaveBeenCalled();
  });
});

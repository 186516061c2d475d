import { type BillingSummary, billingSettingsSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BillingSettings } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { keys } from "../../lib/query.ts";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { formFromSettings, limitsPatch } from "./limits.ts";
import { LimitsForm } from "./limits-form.tsx";
import { limitsSentence } from "./words.ts";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const none: BillingSettings = {
  orgMonthlyLimitMicros: null,
  memberDailyLimitMicros: null,
  lowBalanceMicros: null,
  runwayAlertDays: null,
  alertWebhookUrl: null,
  limitWarningPct: 80,
};

describe("limitsPatch", () => {
  it("takes the forecast alert as whole days from 1 to 365, empty removing it", () => {
    const days = (text: string) =>
      limitsPatch({ ...formFromSettings(none), runwayAlertDays: text }, none);
    expect(days("14")).toEqual({ ok: true, patch: { runwayAlertDays: 14 } });
    for (const bad of ["0", "366", "2.5", "-1", "a week"]) {
      expect(days(bad)).toMatchObject({ ok: false, field: "runwayAlertDays" });
    }
    const set = { ...none, runwayAlertDays: 7 };
    expect(limitsPatch({ ...formFromSettings(set), runwayAlertDays: "" }, set)).toEqual({
      ok: true,
      patch: { runwayAlertDays: null },
    });
  });

  it("takes the warning share as a whole percentage from 1 to 99, empty turning it off", () => {
    const pct = (text: string) =>
      limitsPatch({ ...formFromSettings(none), limitWarningPct: text }, none);
    expect(formFromSettings(none).limitWarningPct).toBe("80");
    expect(pct("80")).toEqual({ ok: true, patch: {} });
    expect(pct("90")).toEqual({ ok: true, patch: { limitWarningPct: 90 } });
    expect(pct("")).toEqual({ ok: true, patch: { limitWarningPct: null } });
    for (const bad of ["0", "100", "85.5", "-5", "most"]) {
      expect(pct(bad)).toMatchObject({ ok: false, field: "limitWarningPct" });
    }
  });

  it("sends dollars as integer micros, and only what changed", () => {
    const form = { ...formFromSettings(none), orgMonthlyLimitMicros: "$250.75" };
    expect(limitsPatch(form, none)).toEqual({
      ok: true,
      patch: { orgMonthlyLimitMicros: 250_750_000 },
    });
  });

  it("takes a limit of 0.005 (half a cent) as 5000 micros, not as zero", () => {
    const form = { ...formFromSettings(none), memberDailyLimitMicros: "0.005" };
    expect(limitsPatch(form, none)).toEqual({
      ok: true,
      patch: { memberDailyLimitMicros: 5_000 },
    });
  });

  it("refuses a seventh decimal with a message that says why", () => {
    const form = { ...formFromSettings(none), lowBalanceMicros: "0.0000005" };
    const result = limitsPatch(form, none);
    expect(result).toMatchObject({ ok: false, field: "lowBalanceMicros" });
    expect(result.ok ? "" : result.message).toMatch(/at most 6 decimal places/);
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

  it("refuses zero, junk and non-http URLs", () => {
    const base = formFromSettings(none);
    for (const text of ["0", "0.000000", "ten", "-3"]) {
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

  it("names every field's problem at once, not the first only", () => {
    const form = { ...formFromSettings(none), lowBalanceMicros: "ten", runwayAlertDays: "400" };
    expect(limitsPatch(form, none)).toMatchObject({
      ok: false,
      field: "lowBalanceMicros",
      problems: [{ field: "lowBalanceMicros" }, { field: "runwayAlertDays" }],
    });
  });
});

describe("limitsSentence", () => {
  it("says the limits, their periods and when they reset", () => {
    expect(
      limitsSentence({ orgMonthlyLimitMicros: 50_000_000, memberDailyLimitMicros: 5_000 }),
    ).toBe(
      "Your organization may spend up to $50.00 a month (resets on the 1st, UTC); each member up to $0.005 a day (resets at 00:00 UTC).",
    );
    expect(limitsSentence({ orgMonthlyLimitMicros: null, memberDailyLimitMicros: null })).toBe(
      "Your organization has no monthly spend limit; members have no daily limit.",
    );
  });
});

describe("LimitsForm", () => {
  it("saves a half-cent limit and puts the server's values into the balance's cache", async () => {
    const saved = { ...none, memberDailyLimitMicros: 5_000 };
    const update = vi.spyOn(billingApi, "updateBillingSettings").mockResolvedValue(saved);
    const { queryClient } = await renderInApp(<LimitsForm orgId="org_1" settings={none} />);
    queryClient.setQueryData(keys.billing("org_1"), { orgId: "org_1", ...none } as BillingSummary);
    fireEvent.change(screen.getByLabelText("Daily limit per member (USD)"), {
      target: { value: "0.005" },
    });
    fireEvent.click(screen.getByRole("button", { name: "Save settings" }));
    await waitFor(() =>
      expect(update).toHaveBeenCalledWith("org_1", { memberDailyLimitMicros: 5_000 }),
    );
    await waitFor(() =>
      expect(queryClient.getQueryData<BillingSummary>(keys.billing("org_1"))).toMatchObject({
        memberDailyLimitMicros: 5_000,
      }),
    );
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("marks an invalid amount on its field and sends nothing", async () => {
    const update = vi.spyOn(billingApi, "updateBillingSettings");
    await renderInApp(<LimitsForm orgId="org_1" settings={none} />);
    const input = screen.getByLabelText("Monthly limit for the organization (USD)");
    fireEvent.change(input, { target: { value: "1.0000001" } });
    fireEvent.click(screen.getByRole("button", { name: "Save settings" }));
    await waitFor(() =>
      expect(describedText(input)).toMatch(/^Use at most 6 decimal places.*\.\s/),
    );
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(document.activeElement).toBe(input);
    expect(update).not.toHaveBeenCalled();
  });

  it("shows every problem of the API's refusal at its field", async () => {
    answerEvery(
      400,
      refusedBody(billingSettingsSchema, { orgMonthlyLimitMicros: 5.5, limitWarningPct: 100 }),
    );
    await renderInApp(<LimitsForm orgId="org_1" settings={none} />);
    const monthly = screen.getByLabelText("Monthly limit for the organization (USD)");
    const warn = screen.getByLabelText("Warn in the chat at (% of a limit)");
    fireEvent.change(monthly, { target: { value: "5" } });
    fireEvent.change(warn, { target: { value: "90" } });
    fireEvent.click(screen.getByRole("button", { name: "Save settings" }));
    await waitFor(() => expect(monthly.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(monthly)).toMatch(/^Must be a whole number of micro-dollars\. Counted/);
    expect(warn.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(warn)).toMatch(/^Must be at most 99\. Members and end users/);
    expect(document.activeElement).toBe(monthly);
    expect(screen.queryByRole("alert")).toBeNull();
  });
});

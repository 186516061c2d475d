import type { BillingSettingsPatch } from "@parley/shared";
import type { BillingSettings } from "../../lib/api.ts";
import { dollarsInput, parseDollars } from "../../lib/money.ts";
import type { Problem, Refusal } from "../../lib/refusal.ts";

export type LimitField = "orgMonthlyLimitMicros" | "memberDailyLimitMicros" | "lowBalanceMicros";

export const LIMIT_FIELDS: readonly LimitField[] = [
  "orgMonthlyLimitMicros",
  "memberDailyLimitMicros",
  "lowBalanceMicros",
];

export type LimitsValues = Record<LimitField, string> & {
  runwayAlertDays: string;
  limitWarningPct: string;
  alertWebhookUrl: string;
};

export const formFromSettings = (settings: BillingSettings): LimitsValues => ({
  orgMonthlyLimitMicros: dollarsInput(settings.orgMonthlyLimitMicros),
  memberDailyLimitMicros: dollarsInput(settings.memberDailyLimitMicros),
  lowBalanceMicros: dollarsInput(settings.lowBalanceMicros),
  runwayAlertDays: settings.runwayAlertDays === null ? "" : String(settings.runwayAlertDays),
  limitWarningPct: settings.limitWarningPct === null ? "" : String(settings.limitWarningPct),
  alertWebhookUrl: settings.alertWebhookUrl ?? "",
});

export type LimitsPatchResult =
  | { ok: true; patch: BillingSettingsPatch }
  | ({ ok: false } & Refusal & { field: keyof LimitsValues });

/**
 * Turns the limits form into the settings PATCH: only changed fields, dollars as integer micros,
 * an emptied field as `null` (removes the limit). Up to six decimals are taken (a limit of $0.005
 * is a real limit); an untouched field is never re-sent. Refused: every field's problem at once
 * (the first is `field` and `message`), named as the API names the field.
 */
export function limitsPatch(form: LimitsValues, current: BillingSettings): LimitsPatchResult {
  const patch: BillingSettingsPatch = {};
  const problems: (Problem & { field: keyof LimitsValues })[] = [];
  const initial = formFromSettings(current);
  for (const field of LIMIT_FIELDS) {
    const text = form[field].trim();
    if (text === initial[field]) continue;
    if (text === "") {
      patch[field] = null;
      continue;
    }
    const parsed = parseDollars(text);
    if (!parsed.ok || parsed.micros <= 0) {
      problems.push({
        field,
        message:
          !parsed.ok && parsed.error === "precision"
            ? "Use at most 6 decimal places: amounts are counted in millionths of a dollar"
            : "Enter an amount in dollars above zero, like 50, 12.50 or 0.005, or leave it empty",
      });
    } else patch[field] = parsed.micros;
  }
  const days = form.runwayAlertDays.trim();
  if (days !== initial.runwayAlertDays) {
    if (days === "") patch.runwayAlertDays = null;
    else if (!/^\d{1,3}$/.test(days) || Number(days) < 1 || Number(days) > 365) {
      problems.push({
        field: "runwayAlertDays",
        message: "Enter a whole number of days from 1 to 365, or leave it empty",
      });
    } else patch.runwayAlertDays = Number(days);
  }
  const pct = form.limitWarningPct.trim();
  if (pct !== initial.limitWarningPct) {
    if (pct === "") patch.limitWarningPct = null;
    else if (!/^\d{1,2}$/.test(pct) || Number(pct) < 1) {
      problems.push({
        field: "limitWarningPct",
        message: "Enter a whole percentage from 1 to 99, or leave it empty for no warning",
      });
    } else patch.limitWarningPct = Number(pct);
  }
  const url = form.alertWebhookUrl.trim();
  if (url !== initial.alertWebhookUrl) {
    if (url === "") patch.alertWebhookUrl = null;
    else if (!/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)) {
      problems.push({ field: "alertWebhookUrl", message: "Enter an http(s) URL" });
    } else patch.alertWebhookUrl = url;
  }
  const [first] = problems;
  if (first) return { ok: false, ...first, ...(problems.length > 1 ? { problems } : {}) };
  return { ok: true, patch };
}

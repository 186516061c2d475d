import { z } from "zod";

/** Integer micro-dollars (1 USD = 1,000,000). A float never reaches a balance. */
export const microsSchema = z.number().int().safe();

export const checkoutSchema = z.strictObject({
  amountMicros: microsSchema
    .positive()
    .refine(
      (value) => value % 10_000 === 0,
      "must be a whole number of cents (a multiple of 10000)",
    ),
});
export type Checkout = z.infer<typeof checkoutSchema>;

const limit = microsSchema.positive().nullable();

/** Spend controls and alert settings of an org; `null` removes a limit. */
export const billingSettingsSchema = z
  .strictObject({
    orgMonthlyLimitMicros: limit.optional(),
    memberDailyLimitMicros: limit.optional(),
    lowBalanceMicros: limit.optional(),
    alertWebhookUrl: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .nullable()
      .optional(),
  })
  .refine((value) => Object.keys(value).length > 0, "at least one setting is required");
export type BillingSettingsPatch = z.infer<typeof billingSettingsSchema>;

export const usageGroupBySchema = z.enum(["day", "model", "member", "project", "session"]);
export type UsageGroupBy = z.infer<typeof usageGroupBySchema>;

/** A date (`2026-11-01`, midnight UTC) or a full ISO timestamp, turned into epoch milliseconds. */
const instant = z
  .string()
  .max(40)
  .transform((value, ctx) => {
    const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: "custom", message: "must be a date (YYYY-MM-DD) or an ISO timestamp" });
      return z.NEVER;
    }
    return ms;
  });

/** `from` is inclusive, `to` exclusive; the default window is the last 30 days. */
export const usageQuerySchema = z
  .strictObject({
    from: instant.optional(),
    to: instant.optional(),
    groupBy: usageGroupBySchema.default("day"),
    memberId: z.string().max(100).optional(),
  })
  .transform((value) => {
    const to = value.to ?? Date.now() + 1;
    return { ...value, to, from: value.from ?? to - 30 * 24 * 60 * 60 * 1000 };
  })
  .refine((value) => value.from < value.to, { message: "from must be before to", path: ["from"] });
export type UsageQuery = z.infer<typeof usageQuerySchema>;

export interface BillingSummary {
  orgId: string;
  currency: "usd";
  availableMicros: number;
  heldMicros: number;
  postedMicros: number;
  orgMonthlyLimitMicros: number | null;
  memberDailyLimitMicros: number | null;
  lowBalanceMicros: number | null;
  alertWebhookUrl: string | null;
}

export interface LedgerEntry {
  id: string;
  kind: "grant" | "topup" | "usage" | "adjustment";
  amountMicros: number;
  balanceAfterMicros: number;
  reference: string | null;
  memo: string | null;
  createdAt: string;
}

export interface UsageGroup {
  key: string | null;
  requests: number;
  billableRequests: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  reasoningTokens: number;
  costMicros: number;
  priceMicros: number;
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageGroupBy;
  items: UsageGroup[];
  nextCursor: null;
  totals: Omit<UsageGroup, "key">;
}

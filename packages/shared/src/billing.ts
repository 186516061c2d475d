import { z } from "zod";
import { pageQuerySchema } from "./pagination.ts";
import { webUrlSchema } from "./urls.ts";

/** Integer micro-dollars (1 USD = 1,000,000). A float never reaches a balance. */
export const microsSchema = z.number().int("must be a whole number of micro-dollars").safe();

/** Dollars as a person reads them, for a rule's message: 5000000 is "$5", 1500000 "$1.50". */
const dollarsOf = (micros: number) =>
  `$${(micros / 1_000_000).toLocaleString("en-US", { maximumFractionDigits: 6 })}`;

/** The words of a range of micro-dollars, in both units: a field's rule, for its message. */
export const microsRangeRule = (min: number, max: number) =>
  `must be from ${min} to ${max} micro-dollars (${dollarsOf(min)} to ${dollarsOf(max)})`;

/**
 * Integer micro-dollars from `min` to `max`, one message stating that rule whichever bound a value
 * breaks (`1e30` read "<=9007199254740991", JavaScript's largest safe integer, not the field's rule).
 */
export const microsInRange = (min: number, max: number) => {
  const rule = microsRangeRule(min, max);
  // The bounds before `int`: zod's `int` refuses an unsafe integer too, with its own words, and
  // the first problem is the one a refusal names.
  return z.number().min(min, rule).max(max, rule).int("must be a whole number of micro-dollars");
};

export const checkoutSchema = z.strictObject({
  // Its range is the Worker's setting (CHECKOUT_MIN_MICROS, CHECKOUT_MAX_MICROS), checked by the
  // route and stated in its message; here only its form, so no bound of this schema answers first.
  // Not `int()`: zod's refuses an integer past 2^53 with its own words before the route's range.
  amountMicros: z
    .number()
    .refine(Number.isInteger, "must be a whole number of micro-dollars")
    .refine(
      (value) => !Number.isSafeInteger(value) || value % 10_000 === 0,
      "must be a whole number of cents (a multiple of 10000)",
    ),
});
export type Checkout = z.infer<typeof checkoutSchema>;

const limit = microsInRange(1, Number.MAX_SAFE_INTEGER).nullable();

/** Spend controls and alert settings of an org; `null` removes a limit. */
export const billingSettingsSchema = z
  .strictObject({
    orgMonthlyLimitMicros: limit.optional(),
    memberDailyLimitMicros: limit.optional(),
    lowBalanceMicros: limit.optional(),
    /** Alert when the balance lasts fewer days than this at the last 7 days' rate. */
    runwayAlertDays: z.number().int().min(1).max(365).nullable().optional(),
    /** Warn in the chat at this share of a spend limit (default 80); null: no warning. */
    limitWarningPct: z.number().int().min(1).max(99).nullable().optional(),
    alertWebhookUrl: webUrlSchema(2000).nullable().optional(),
  })
  .refine((value) => Object.keys(value).length > 0, "at least one setting is required");
export type BillingSettingsPatch = z.infer<typeof billingSettingsSchema>;

export const usageGroupBySchema = z.enum(["day", "model", "member", "project", "session"]);
export type UsageGroupBy = z.infer<typeof usageGroupBySchema>;

const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * A date (`2026-11-01`, midnight UTC) or a full ISO timestamp, turned into epoch milliseconds.
 * Only those two forms: `Date.parse` alone takes "1" for 2001 and rolls 2026-02-31 over to March,
 * and a six-digit year at the edge of the Date range made the default window unprintable (a 500).
 */
export const instant = z
  .string()
  .max(40)
  .transform((value, ctx) => {
    const match = ISO_INSTANT.exec(value);
    const day = match?.[1] ?? "";
    const midnight = Date.parse(`${day}T00:00:00Z`);
    const ms = match?.[2] ? Date.parse(value) : midnight;
    // The calendar day must exist: Date.parse takes 2026-02-31 and means March 3.
    const realDay = !Number.isNaN(midnight) && new Date(midnight).toISOString().startsWith(day);
    if (!match || !realDay || Number.isNaN(ms)) {
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
  runwayAlertDays: number | null;
  alertWebhookUrl: string | null;
  /** The chat warns at this share of a spend limit; null: no warning (2026-12-02). */
  limitWarningPct: number | null;
  /** How long the available balance lasts at the last 7 UTC days' billable spend (2026-12-02). */
  forecast: BalanceForecast;
  /** The grants with credits left, in the order usage draws them (2026-12-02, credit grants). */
  grants: Grant[];
}

/**
 * Where a grant's credits came from. `legacy` is the balance an org had before grants existed;
 * `adjustment` a positive correction (a dispute won back).
 */
export const grantSourceSchema = z.enum([
  "signup",
  "promotion",
  "top_up",
  "monthly_allowance",
  "legacy",
  "adjustment",
]);
export type GrantSource = z.infer<typeof grantSourceSchema>;

/**
 * A lot of credits: usage draws the soonest-expiring first (no expiry last), then the lower
 * priority, then the oldest; what is left at `expiresAt` expires.
 */
export interface Grant {
  id: string;
  source: GrantSource;
  grantedMicros: number;
  remainingMicros: number;
  expiresAt: string | null;
  priority: number;
}

/** A platform operator's promotion grant (`POST /api/operator/orgs/:orgId/grants`). */
export const operatorGrantSchema = z.strictObject({
  amountMicros: microsInRange(1, 1_000_000_000_000),
  /** ISO 8601; must be in the future. Absent or null: never expires. */
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
  priority: z.number().int().min(0).max(100).optional(),
  /** One per logical grant: a retry with the same key and terms answers the first grant. */
  idempotencyKey: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._:-]+$/, "letters, digits and . _ : - only"),
  memo: z.string().min(1).max(200).optional(),
});
export type OperatorGrant = z.infer<typeof operatorGrantSchema>;

/** An org's monthly allowance (`PUT /api/operator/orgs/:orgId/allowance`); 0 turns it off. */
export const allowanceSchema = z.strictObject({
  amountMicros: microsInRange(0, 1_000_000_000_000),
  /** The UTC day of the month it renews on, at 00:00 (1 to 28: every month has it). */
  billingDay: z.number().int().min(1).max(28),
});
export type AllowanceInput = z.infer<typeof allowanceSchema>;

const wholeCents = (schema: z.ZodNumber) =>
  schema.refine(
    (value) => value % 10_000 === 0,
    "must be a whole number of cents (a multiple of 10000)",
  );

/**
 * Automatic top-up (`PUT /api/orgs/:orgId/billing/auto-top-up`): when the available balance falls
 * below `thresholdMicros`, the saved card is charged `amountMicros` off-session, at most
 * `monthlyCapMicros` per UTC month. Turning it on needs a saved card.
 */
export const autoTopUpSettingsSchema = z
  .strictObject({
    enabled: z.boolean(),
    thresholdMicros: wholeCents(microsInRange(1, 1_000_000_000_000)),
    amountMicros: wholeCents(microsInRange(1_000_000, 10_000_000_000)),
    monthlyCapMicros: wholeCents(microsInRange(1, 100_000_000_000)),
  })
  .refine((value) => value.monthlyCapMicros >= value.amountMicros, {
    message: "must be at least amountMicros",
    path: ["monthlyCapMicros"],
  });
export type AutoTopUpSettingsInput = z.infer<typeof autoTopUpSettingsSchema>;

/** Automatic top-up as `GET .../billing/auto-top-up` answers it. */
export interface AutoTopUp {
  enabled: boolean;
  thresholdMicros: number;
  amountMicros: number;
  monthlyCapMicros: number;
  /** The saved card, or null (save one through `POST .../auto-top-up/card`). */
  card: { brand: string; last4: string; expMonth: number; expYear: number; savedAt: string } | null;
  /** Why it is stopped until someone acts (a declined card, authentication required), or null. */
  paused: { code: string; message: string; at: string } | null;
  /** Charged (or being charged) automatically this UTC month, against the cap. */
  monthChargedMicros: number;
  /** The latest automatic charges, newest first. */
  charges: {
    id: string;
    amountMicros: number;
    status: "requested" | "succeeded" | "failed";
    failureCode: string | null;
    createdAt: string;
  }[];
}

export interface OperatorGrantResult {
  orgId: string;
  grant: Grant;
  /** True when the idempotency key had already granted it: nothing new was posted. */
  replayed: boolean;
}

export interface AllowanceResult {
  orgId: string;
  amountMicros: number;
  billingDay: number;
  /** When the next period's grant posts; null when the allowance is off. */
  nextRenewalAt: string | null;
}

export interface BalanceForecast {
  windowDays: number;
  spentMicros: number;
  dailyRateMicros: number;
  /** Days left at that rate, to a tenth (rounded down); null when nothing is being spent. */
  daysLeft: number | null;
  runsOutAt: string | null;
}

/** A paid top-up (2026-12-02): `GET .../billing/payments`. */
export interface Payment {
  /** Stripe's PaymentIntent id. */
  id: string;
  amountMicros: number;
  /** What was refunded of it so far at Stripe (the verified refund webhooks). */
  refundedMicros: number;
  /** Disputed at Stripe and not given back (a won dispute's funds reinstated). */
  disputedMicros: number;
  /**
   * What its refunds and disputes took back from the org's credits: at most `amountMicros`,
   * whatever Stripe took (issue 28.2). The ledger's entries for them add up to minus this.
   */
  reversedMicros: number;
  status: "paid" | "partially_refunded" | "refunded" | "disputed";
  /** A Checkout top-up someone paid, or an automatic top-up charged to the saved card. */
  source: "checkout" | "auto_top_up";
  /** Stripe's hosted receipt of the payment; null while Stripe has not said it. */
  receiptUrl: string | null;
  createdAt: string;
}

export interface LedgerEntry {
  id: string;
  kind: "grant" | "topup" | "usage" | "adjustment";
  amountMicros: number;
  balanceAfterMicros: number;
  reference: string | null;
  memo: string | null;
  /**
   * The memo in words: a usage entry's memo is the key its usage is filed under (a model id, or
   * `tool:<sourceId>:<tool>`), named here as usage by model names it; other memos as they are.
   */
  memoLabel: string | null;
  createdAt: string;
  /** The grant this entry funded, or (a negative adjustment) expired; null otherwise. */
  grantId: string | null;
  grantSource: GrantSource | null;
  /** `expired` for a grant's expiry entry, `granted` for its funding entry. */
  grantEvent: "granted" | "expired" | null;
}

export interface UsageGroup {
  key: string | null;
  /**
   * What a person reads for the key: the member's name (or email; "Erased member" once
   * pseudonymised), the project's name, the session's title ("Untitled session"), the model id or
   * the day. See `LABEL_FALLBACKS` for absent and deleted objects.
   */
  label: string;
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
  totals: Omit<UsageGroup, "key" | "label">;
}

/** Labels of ids that name nothing any more, or nothing at all. */
export const LABEL_FALLBACKS = {
  erasedMember: "Erased member",
  unknownMember: "Unknown member",
  noMember: "No member",
  deletedProject: "Deleted project",
  noProject: "No project",
  untitledSession: "Untitled session",
  deletedSession: "Deleted session",
  noSession: "No session",
} as const;

const filterId = z.string().min(1).max(100);

/**
 * Query of the activity list (one row per provider call), newest first: the ledger's paging
 * (`cursor`, `limit`) and filters. `from` is inclusive, `to` exclusive; without them, all time.
 * Unknown parameters are refused, like every query form.
 */
export const activityQuerySchema = z
  .strictObject({
    ...pageQuerySchema.shape,
    member: filterId.optional(),
    project: filterId.optional(),
    session: filterId.optional(),
    model: z.string().min(1).max(200).optional(),
    from: instant.optional(),
    to: instant.optional(),
  })
  .refine((value) => value.from === undefined || value.to === undefined || value.from < value.to, {
    message: "from must be before to",
    path: ["from"],
  });
export type ActivityQuery = z.infer<typeof activityQuerySchema>;

const labelled = z.strictObject({ id: z.string(), label: z.string() });

/** One provider call (a usage event) of the activity list. */
export const activityItemSchema = z.strictObject({
  /** The usage event's request id (`<turnId>:<step>`). */
  id: z.string(),
  createdAt: z.string(),
  /** Null for usage no member made (none today). */
  member: labelled.nullable(),
  /** Null for usage outside a project. */
  project: labelled.nullable(),
  /** Null for usage outside an assistant session (the onboarding preview). */
  session: labelled.nullable(),
  model: z.string(),
  /**
   * The model's display name in the catalogue (the id when it is no longer listed); for a tool
   * call, "<source name> · <tool>" ("Removed tool source · <tool>" once its source is deleted).
   */
  modelLabel: z.string(),
  /**
   * What the call was: a model's (`model` is its id) or a tool's from one of the org's tool
   * sources (`model` is its usage key, `tool:<sourceId>:<tool>`, no tokens). Since 2026-12-06.
   */
  kind: z.enum(["model", "tool"]),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  cachedPromptTokens: z.number().int(),
  reasoningTokens: z.number().int(),
  /** What the provider charged. */
  costMicros: microsSchema,
  /** What the org was charged (cost plus markup; 0 for the free preview). */
  priceMicros: microsSchema,
  billable: z.boolean(),
});
export type ActivityItem = z.infer<typeof activityItemSchema>;

export const activityPageSchema = z.strictObject({
  items: z.array(activityItemSchema),
  nextCursor: z.string().nullable(),
});
export type ActivityPage = z.infer<typeof activityPageSchema>;

/** A spend or low-balance alert as `GET .../billing/alerts` lists it. */
export interface BillingAlert {
  key: string;
  kind:
    | "org_monthly_spend"
    | "member_daily_spend"
    | "low_balance"
    | "low_runway"
    | "auto_top_up_failed";
  memberId: string | null;
  /** Readable: `December 2026`, `2026-12-01 (UTC)`, or null for a low-balance alert. */
  period: string | null;
  /** The internal period key (`2026-12`, `2026-12-01`, `entry-<seq>`), as `period` was until 2026-12-01. */
  periodKey: string;
  thresholdPct: number | null;
  limitMicros: number;
  levelMicros: number;
  /** One sentence: which limit or threshold, and how much. */
  message: string;
  firedAt: string;
  deliveredAt: string | null;
  attempts: number;
  parkedReason: string | null;
}

/** The calendar periods a limit counts over, in UTC: a day, a week from Monday, a month. */
export const limitPeriodSchema = z.enum(["day", "week", "month"]);
export type LimitPeriod = z.infer<typeof limitPeriodSchema>;

/** Sets (an amount) or removes (null) one limit of a member, a project or oneself, for a period. */
export const limitRuleSchema = z.strictObject({
  period: limitPeriodSchema,
  amountMicros: limit,
});
export type LimitRuleInput = z.infer<typeof limitRuleSchema>;

/** One limit set on a member (by an admin), on oneself (`own`) or on a project (2026-12-02). */
export interface LimitRule {
  subject: "member" | "own" | "project";
  /** The member's user id, or the project's id. */
  subjectId: string;
  /** The member's name or email, or the project's name. */
  label: string;
  period: LimitPeriod;
  amountMicros: number;
  updatedAt: string;
}

/**
 * One limit that applies to the caller's calls, as the chat's warning reads it. `limit` is the
 * code a refusal's `details.limit` carries (`org_monthly`, `member_daily`, `project_weekly`,
 * `own_monthly`, `end_user_daily`...).
 */
export interface LimitState {
  limit: string;
  period: LimitPeriod;
  limitMicros: number;
  /** Settled spend in the current period. */
  spentMicros: number;
  resetsAt: string;
  /** Who can raise it: the caller (their own limit) or the org's owners and admins. */
  raisedBy: "you" | "admins";
  /** The spend reached the org's warning share of it (`warningPct`). */
  warning: boolean;
}

export interface LimitStatus {
  /** The share of a limit at which the chat warns; null: the org turned warnings off. */
  warningPct: number | null;
  limits: LimitState[];
}

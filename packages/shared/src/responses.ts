import { z } from "zod";
import type { ConnectTicket } from "./agents.ts";
import type {
  App,
  AppSecretInfo,
  AppWithSecret,
  EmbedMe,
  EmbedToken,
  EndUserWithUsage,
  NewAppSecret,
  RotatedAppSecret,
} from "./apps.ts";
import {
  type ActivityPage,
  type AllowanceResult,
  type AutoTopUp,
  activityPageSchema,
  type BillingAlert,
  type BillingSummary,
  microsSchema as billingMicros,
  type Grant,
  grantSourceSchema,
  type LedgerEntry,
  type LimitRule,
  type LimitStatus,
  limitPeriodSchema,
  type OperatorGrantResult,
  type Payment,
  type UsageGroup,
  type UsageReport,
  usageGroupBySchema,
} from "./billing.ts";
import type { DataExport } from "./data-exports.ts";
import { type ErrorBody, errorStatus } from "./errors.ts";
import type { Page } from "./pagination.ts";
import {
  API_KEY_SCOPES,
  type ApiKey,
  type AuthResult,
  type CreatedApiKey,
  type FormerMember,
  type Invitation,
  type InvitationPreview,
  type Me,
  type Member,
  type OrgSummary,
  type Project,
  roleSchema,
  type Session,
} from "./schemas.ts";

/**
 * What the API answers, as zod schemas (2026-12-02, docs/2026-12-02-openapi.md). The OpenAPI
 * document at `GET /api/openapi.json` is generated from them, and the worker's conformance test
 * validates real answers against them. Objects are strict: a field a route adds without adding it
 * here fails that test, so the document cannot fall behind. Each schema is checked at compile time
 * against the interface the code returns (`sameType` below), in both directions.
 * `.meta({ id })` names the component in the document.
 */

const iso = z
  .string()
  .meta({ description: "ISO 8601 timestamp", examples: ["2026-12-02T09:30:00.000Z"] });
// Named for readers of the reference (the safe-integer bounds made its examples -9007199254740991).
const microsSchema = billingMicros.meta({
  description: "integer micro-dollars (1 USD = 1,000,000)",
  examples: [5_000_000],
});
const nullableIso = iso.nullable();

export const errorBodySchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus]),
      message: z.string(),
      field: z.string().optional(),
      issues: z
        .array(z.strictObject({ field: z.string(), message: z.string() }))
        .optional()
        .describe(
          "Every problem of a refused input, when it had more than one (the first is field)",
        ),
    }),
  })
  .meta({ id: "Error" });

/** `{ items, nextCursor }` of one item schema. */
export const pageSchemaOf = <T extends z.ZodType>(item: T) =>
  z.strictObject({ items: z.array(item), nextCursor: z.string().nullable() });

export const healthSchema = z.strictObject({ ok: z.literal(true) }).meta({ id: "Health" });

export const authResultSchema = z
  .strictObject({
    accessToken: z.string(),
    expiresIn: z.number().int().describe("seconds"),
    user: z.strictObject({ id: z.string(), email: z.string(), name: z.string() }),
  })
  .meta({ id: "AuthResult" });

export const orgSummarySchema = z
  .strictObject({ id: z.string(), name: z.string(), role: roleSchema, createdAt: iso })
  .meta({ id: "Org" });
export const orgPageSchema = pageSchemaOf(orgSummarySchema).meta({ id: "OrgPage" });

export const meSchema = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    createdAt: iso,
    orgs: z.array(orgSummarySchema),
    emailVerified: z.boolean().describe("Whether a link mailed to the address was used"),
    signupGrantWaits: z
      .boolean()
      .describe(
        "Whether proving the address will give the sign-up grant to the org signed up with (false once verified, for an invitee, or for a person whose grant was given)",
      ),
  })
  .meta({ id: "Me" });

export const memberSchema = z
  .strictObject({
    userId: z.string(),
    email: z.string(),
    name: z.string(),
    role: roleSchema,
    joinedAt: iso,
  })
  .meta({ id: "Member" });
export const memberPageSchema = pageSchemaOf(memberSchema).meta({ id: "MemberPage" });

export const formerMemberSchema = z
  .strictObject({
    userId: z.string(),
    email: z.string(),
    name: z.string(),
    leftAt: iso,
  })
  .meta({ id: "FormerMember" });
export const formerMemberPageSchema = pageSchemaOf(formerMemberSchema).meta({
  id: "FormerMemberPage",
});

export const projectSchema = z
  .strictObject({
    id: z.string(),
    orgId: z.string(),
    name: z.string(),
    memory: z.record(z.string(), z.json()),
    createdBy: z.string().nullable(),
    createdAt: iso,
    updatedAt: iso,
    defaultProfileId: z.string().nullable(),
    previewProfileId: z.string().nullable(),
  })
  .meta({ id: "Project" });
export const projectPageSchema = pageSchemaOf(projectSchema).meta({ id: "ProjectPage" });

export const sessionSchema = z
  .strictObject({
    id: z.string(),
    projectId: z.string(),
    orgId: z.string(),
    ownerId: z.string(),
    ownerLabel: z.string(),
    title: z.string().nullable(),
    createdAt: iso,
    updatedAt: iso,
    lastActivityAt: iso,
    spendMicros: microsSchema,
    model: z.string().nullable().describe("The model its owner picked; null: the profile's"),
  })
  .meta({ id: "Session" });
export const sessionPageSchema = pageSchemaOf(sessionSchema).meta({ id: "SessionPage" });

export const invitationSchema = z
  .strictObject({
    id: z.string(),
    orgId: z.string(),
    email: z.string(),
    role: roleSchema,
    status: z.enum(["pending", "accepted", "revoked", "expired"]),
    createdAt: iso,
    expiresAt: iso,
    url: z.string().optional().describe("Only when created pending: the link, shown this once"),
    mailed: z
      .boolean()
      .optional()
      .describe(
        "Only when created: whether the link was mailed to the invitee (not when the inviter's own address is unverified, or past their mail limit)",
      ),
  })
  .meta({ id: "Invitation" });
export const invitationPageSchema = pageSchemaOf(invitationSchema).meta({ id: "InvitationPage" });

export const invitationPreviewSchema = z
  .strictObject({ orgName: z.string(), email: z.string(), role: roleSchema, expiresAt: iso })
  .meta({ id: "InvitationPreview" });

export const acceptedInvitationSchema = z
  .strictObject({ orgId: z.string(), role: roleSchema })
  .meta({ id: "AcceptedInvitation" });

export const apiKeySchema = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    createdBy: z.string().nullable(),
    createdAt: iso,
    lastUsedAt: nullableIso,
    expiresAt: nullableIso,
    revokedAt: nullableIso,
  })
  .meta({ id: "ApiKey" });
export const apiKeyPageSchema = pageSchemaOf(apiKeySchema).meta({ id: "ApiKeyPage" });
export const createdApiKeySchema = apiKeySchema
  .extend({ secret: z.string().describe("The whole key, shown this once") })
  .meta({ id: "CreatedApiKey" });

export const issuedConnectTicketSchema = z
  .strictObject({ ticket: z.string(), expiresAt: iso })
  .meta({ id: "ConnectTicket" });

export const billingSettingsResultSchema = z
  .strictObject({
    orgMonthlyLimitMicros: microsSchema.nullable(),
    memberDailyLimitMicros: microsSchema.nullable(),
    lowBalanceMicros: microsSchema.nullable(),
    runwayAlertDays: z.number().int().nullable(),
    alertWebhookUrl: z
      .string()
      .nullable()
      .describe("Owners and admins only: null for members (the URL may be its own credential)"),
    limitWarningPct: z
      .number()
      .int()
      .nullable()
      .describe("The chat warns at this share of a spend limit; null: no warning"),
  })
  .meta({ id: "BillingSettings" });

export const balanceForecastSchema = z
  .strictObject({
    windowDays: z.number().int(),
    spentMicros: microsSchema,
    dailyRateMicros: microsSchema,
    daysLeft: z.number().nullable().describe("At the window's rate, to a tenth; null when idle"),
    runsOutAt: iso.nullable(),
  })
  .meta({ id: "BalanceForecast" });

export const grantSchema = z
  .strictObject({
    id: z.string(),
    source: grantSourceSchema,
    grantedMicros: microsSchema,
    remainingMicros: microsSchema,
    expiresAt: nullableIso,
    priority: z.number().int().describe("Lower draws first among grants expiring together"),
  })
  .meta({ id: "Grant" });

export const operatorGrantResultSchema = z
  .strictObject({ orgId: z.string(), grant: grantSchema, replayed: z.boolean() })
  .meta({ id: "OperatorGrantResult" });

export const allowanceResultSchema = z
  .strictObject({
    orgId: z.string(),
    amountMicros: microsSchema,
    billingDay: z.number().int(),
    nextRenewalAt: nullableIso,
  })
  .meta({ id: "Allowance" });

export const billingSummarySchema = billingSettingsResultSchema
  .extend({
    orgId: z.string(),
    currency: z.literal("usd"),
    availableMicros: microsSchema,
    heldMicros: microsSchema,
    postedMicros: microsSchema,
    forecast: balanceForecastSchema,
    grants: z.array(grantSchema).describe("Grants with credits left, in draw order"),
  })
  .meta({ id: "BillingSummary" });

export const ledgerEntrySchema = z
  .strictObject({
    id: z.string(),
    kind: z.enum(["grant", "topup", "usage", "adjustment"]),
    amountMicros: microsSchema,
    balanceAfterMicros: microsSchema,
    reference: z.string().nullable(),
    memo: z.string().nullable(),
    memoLabel: z
      .string()
      .nullable()
      .describe(
        "The memo in words: for usage, the model's display name or '<tool source> · <tool>' (the memo is the key usage is filed under, a model id or tool:<sourceId>:<tool>); other memos as they are",
      ),
    createdAt: iso,
    grantId: z.string().nullable(),
    grantSource: grantSourceSchema.nullable(),
    grantEvent: z.enum(["granted", "expired"]).nullable(),
  })
  .meta({ id: "LedgerEntry" });
export const ledgerPageSchema = pageSchemaOf(ledgerEntrySchema).meta({ id: "LedgerPage" });

export const paymentSchema = z
  .strictObject({
    id: z.string().describe("Stripe's PaymentIntent id"),
    amountMicros: microsSchema,
    refundedMicros: microsSchema,
    disputedMicros: microsSchema.describe("Disputed at Stripe and not given back"),
    reversedMicros: microsSchema.describe(
      "Taken back from the org's credits by its refunds and disputes: at most amountMicros",
    ),
    status: z.enum(["paid", "partially_refunded", "refunded", "disputed"]),
    source: z.enum(["checkout", "auto_top_up"]),
    receiptUrl: z.string().nullable().describe("Stripe's hosted receipt; null until Stripe says"),
    createdAt: iso,
  })
  .meta({ id: "Payment" });
export const paymentPageSchema = pageSchemaOf(paymentSchema).meta({ id: "PaymentPage" });

const usageTotals = {
  requests: z.number().int(),
  billableRequests: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  cachedPromptTokens: z.number().int(),
  reasoningTokens: z.number().int(),
  costMicros: microsSchema,
  priceMicros: microsSchema,
};

export const usageGroupSchema = z
  .strictObject({ key: z.string().nullable(), label: z.string(), ...usageTotals })
  .meta({ id: "UsageGroup" });

export const usageReportSchema = z
  .strictObject({
    from: iso,
    to: iso,
    groupBy: usageGroupBySchema,
    items: z.array(usageGroupSchema),
    nextCursor: z.null(),
    totals: z.strictObject(usageTotals),
  })
  .meta({ id: "UsageReport" });

export const activityResponseSchema = activityPageSchema.meta({ id: "ActivityPage" });

export const billingAlertSchema = z
  .strictObject({
    key: z.string(),
    kind: z.enum([
      "org_monthly_spend",
      "member_daily_spend",
      "low_balance",
      "low_runway",
      "auto_top_up_failed",
    ]),
    memberId: z.string().nullable(),
    period: z.string().nullable(),
    periodKey: z.string(),
    thresholdPct: z.number().nullable(),
    limitMicros: microsSchema,
    levelMicros: microsSchema,
    message: z.string(),
    firedAt: iso,
    deliveredAt: nullableIso,
    attempts: z.number().int(),
    parkedReason: z.string().nullable(),
  })
  .meta({ id: "BillingAlert" });
export const billingAlertPageSchema = pageSchemaOf(billingAlertSchema).meta({
  id: "BillingAlertPage",
});

export const autoTopUpSchema = z
  .strictObject({
    enabled: z.boolean(),
    thresholdMicros: microsSchema,
    amountMicros: microsSchema,
    monthlyCapMicros: microsSchema,
    card: z
      .strictObject({
        brand: z.string(),
        last4: z.string(),
        expMonth: z.number().int(),
        expYear: z.number().int(),
        savedAt: iso,
      })
      .nullable(),
    paused: z.strictObject({ code: z.string(), message: z.string(), at: iso }).nullable(),
    monthChargedMicros: microsSchema,
    charges: z.array(
      z.strictObject({
        id: z.string(),
        amountMicros: microsSchema,
        status: z.enum(["requested", "succeeded", "failed"]),
        failureCode: z.string().nullable(),
        createdAt: iso,
      }),
    ),
  })
  .meta({ id: "AutoTopUp" });

export const checkoutSessionSchema = z
  .strictObject({ id: z.string(), url: z.string() })
  .meta({ id: "CheckoutSession" });
export const portalSessionSchema = z
  .strictObject({ url: z.string() })
  .meta({ id: "PortalSession" });

export const stripeWebhookResultSchema = z
  .strictObject({ received: z.literal(true), outcome: z.string() })
  .meta({ id: "StripeWebhookResult" });

const erasureStepSchema = z.strictObject({
  name: z.enum([
    "agents",
    "exports",
    "knowledge",
    "tools",
    "d1",
    "ledger",
    "audit",
    "stripe",
    "verify",
  ]),
  status: z.enum(["pending", "done", "skipped", "failed"]),
  at: nullableIso,
  detail: z.string().nullable(),
});

/** An erasure request as the API shows it: the subject by its hash, never by its id. */
export const erasureRecordSchema = z
  .strictObject({
    id: z.string(),
    orgId: z.string().nullable(),
    status: z.enum(["pending", "running", "completed", "failed"]),
    subject: z.strictObject({
      type: z.enum(["member", "project", "session", "account"]),
      hash: z.string(),
    }),
    legalBasis: z.string(),
    reason: z.string().nullable(),
    requestedBy: z.string(),
    steps: z.array(erasureStepSchema),
    verification: z.unknown().describe("The verification scan's findings, once run"),
    attempts: z.number().int(),
    createdAt: iso,
    updatedAt: iso,
    completedAt: nullableIso,
  })
  .meta({ id: "ErasureRequest" });
export const erasureRecordPageSchema = pageSchemaOf(erasureRecordSchema).meta({
  id: "ErasureRequestPage",
});

const appSecretInfoSchema = z
  .strictObject({ kid: z.string(), createdAt: iso, expiresAt: nullableIso })
  .meta({ id: "AppSecretInfo" });
const newAppSecretSchema = z
  .strictObject({ kid: z.string(), secret: z.string(), createdAt: iso })
  .meta({ id: "NewAppSecret" });

const tokenRules = {
  issuer: z.string(),
  audience: z.string(),
  maxTokenLifetimeSeconds: z.number().int(),
};
const tokenAlgorithm = z.enum(["RS256", "ES256", "EdDSA"]);

export const appSchema = z
  .strictObject({
    id: z.string(),
    orgId: z.string(),
    name: z.string(),
    allowedOrigins: z.array(z.string()),
    projectIds: z.array(z.string()),
    verification: z.discriminatedUnion("type", [
      z.strictObject({
        type: z.literal("secret"),
        alg: z.literal("HS256"),
        secrets: z.array(appSecretInfoSchema),
        ...tokenRules,
      }),
      z.strictObject({
        type: z.literal("public_key"),
        alg: tokenAlgorithm,
        jwk: z.record(z.string(), z.string()),
        ...tokenRules,
      }),
      z.strictObject({
        type: z.literal("jwks"),
        alg: tokenAlgorithm,
        url: z.string(),
        ...tokenRules,
      }),
    ]),
    endUserDailyLimitMicros: microsSchema.nullable(),
    endUserWeeklyLimitMicros: microsSchema.nullable(),
    endUserMonthlyLimitMicros: microsSchema.nullable(),
    showCost: z.boolean(),
    profileId: z.string().nullable().describe("The profile its end users' sessions run"),
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: "App" });
export const appPageSchema = pageSchemaOf(appSchema).meta({ id: "AppPage" });
export const appWithSecretSchema = appSchema
  .extend({ secret: newAppSecretSchema.optional() })
  .meta({ id: "AppWithSecret" });

export const rotatedAppSecretSchema = z
  .strictObject({ secret: newAppSecretSchema, secrets: z.array(appSecretInfoSchema) })
  .meta({ id: "RotatedAppSecret" });

export const endUserTokenSchema = z
  .strictObject({
    accessToken: z.string(),
    expiresIn: z.number().int().describe("seconds"),
    endUser: z.strictObject({ id: z.string(), externalId: z.string() }),
  })
  .meta({ id: "EndUserToken" });

export const endUserWithUsageSchema = z
  .strictObject({
    id: z.string(),
    appId: z.string(),
    externalId: z.string(),
    name: z.string().nullable(),
    createdAt: iso,
    lastSeenAt: iso,
    usage: z
      .strictObject({ requests: z.number().int(), priceMicros: microsSchema })
      .describe("The last 30 days: model calls and what the org was charged"),
  })
  .meta({ id: "EndUserWithUsage" });
export const endUserPageSchema = pageSchemaOf(endUserWithUsageSchema).meta({ id: "EndUserPage" });

export const embedMeSchema = z
  .strictObject({
    endUser: z.strictObject({
      id: z.string(),
      externalId: z.string(),
      name: z.string().nullable(),
    }),
    app: z.strictObject({
      id: z.string(),
      name: z.string(),
      showCost: z.boolean(),
      projects: z.array(z.strictObject({ id: z.string(), name: z.string() })),
    }),
  })
  .meta({ id: "EmbedMe" });

/** A data export job (docs/2026-12-02-data-export.md). */
export const dataExportSchema = z
  .strictObject({
    id: z.string(),
    kind: z.enum(["account", "org"]),
    orgId: z.string().nullable(),
    status: z.enum(["pending", "running", "completed", "failed"]),
    progress: z.strictObject({ done: z.number().int(), total: z.number().int() }),
    createdAt: iso,
    completedAt: iso.nullable(),
    expiresAt: iso.nullable(),
    downloadUrl: z
      .string()
      .nullable()
      .describe("The archive's link, for whoever asked, while it is good"),
    sizeBytes: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: "DataExport" });
export const dataExportPageSchema = pageSchemaOf(dataExportSchema).meta({ id: "DataExportPage" });

export const limitRuleSchemaOut = z
  .strictObject({
    subject: z.enum(["member", "own", "project"]),
    subjectId: z.string(),
    label: z.string(),
    period: limitPeriodSchema,
    amountMicros: microsSchema,
    updatedAt: iso,
  })
  .meta({ id: "LimitRule" });
export const limitRuleListSchema = z
  .strictObject({ items: z.array(limitRuleSchemaOut) })
  .meta({ id: "LimitRuleList" });

export const limitStatusSchema = z
  .strictObject({
    warningPct: z.number().int().nullable(),
    limits: z.array(
      z.strictObject({
        limit: z.string().describe("The code a refusal's details.limit carries"),
        period: limitPeriodSchema,
        limitMicros: microsSchema,
        spentMicros: microsSchema,
        resetsAt: iso,
        raisedBy: z.enum(["you", "admins"]),
        warning: z.boolean(),
      }),
    ),
  })
  .meta({ id: "LimitStatus" });

// Compile-time: each schema describes exactly the type the code answers with (both directions).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameType = <A, B>(_proof: Same<A, B>) => undefined;
type Out<S extends z.ZodType> = z.output<S>;
sameType<Out<typeof errorBodySchema>, ErrorBody>(true);
sameType<Out<typeof authResultSchema>, AuthResult>(true);
sameType<Out<typeof meSchema>, Me>(true);
sameType<Out<typeof orgSummarySchema>, OrgSummary>(true);
sameType<Out<typeof memberSchema>, Member>(true);
sameType<Out<typeof formerMemberSchema>, FormerMember>(true);
sameType<Out<typeof projectSchema>, Project>(true);
sameType<Out<typeof sessionSchema>, Session>(true);
sameType<Out<typeof sessionPageSchema>, Page<Session>>(true);
sameType<Out<typeof invitationPreviewSchema>, InvitationPreview>(true);
sameType<Out<typeof apiKeySchema>, ApiKey>(true);
sameType<Out<typeof createdApiKeySchema>, CreatedApiKey>(true);
sameType<Out<typeof issuedConnectTicketSchema>, ConnectTicket>(true);
sameType<Out<typeof billingSummarySchema>, BillingSummary>(true);
sameType<Out<typeof ledgerEntrySchema>, LedgerEntry>(true);
sameType<Out<typeof usageGroupSchema>, UsageGroup>(true);
sameType<Out<typeof usageReportSchema>, UsageReport>(true);
sameType<Out<typeof activityResponseSchema>, ActivityPage>(true);
sameType<Out<typeof billingAlertSchema>, BillingAlert>(true);
sameType<Out<typeof appSchema>, App>(true);
sameType<Out<typeof appWithSecretSchema>, AppWithSecret>(true);
sameType<Out<typeof rotatedAppSecretSchema>, RotatedAppSecret>(true);
sameType<Out<typeof endUserTokenSchema>, EmbedToken>(true);
sameType<Out<typeof endUserWithUsageSchema>, EndUserWithUsage>(true);
sameType<Out<typeof embedMeSchema>, EmbedMe>(true);
sameType<Out<typeof appSecretInfoSchema>, AppSecretInfo>(true);
sameType<Out<typeof invitationSchema>, Invitation>(true);
sameType<Out<typeof newAppSecretSchema>, NewAppSecret>(true);
sameType<Out<typeof dataExportSchema>, DataExport>(true);
sameType<Out<typeof paymentSchema>, Payment>(true);
sameType<Out<typeof limitRuleSchemaOut>, LimitRule>(true);
sameType<Out<typeof limitStatusSchema>, LimitStatus>(true);
sameType<Out<typeof grantSchema>, Grant>(true);
sameType<Out<typeof operatorGrantResultSchema>, OperatorGrantResult>(true);
sameType<Out<typeof allowanceResultSchema>, AllowanceResult>(true);
sameType<Out<typeof autoTopUpSchema>, AutoTopUp>(true);

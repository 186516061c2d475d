import { alertMessage, alertPeriodLabel } from "@parley/billing";
import {
  AppError,
  type BillingAlert,
  type BillingSummary,
  billingAlertPageSchema,
  billingSettingsResultSchema,
  billingSettingsSchema,
  billingSummarySchema,
  type LedgerEntry,
  ledgerPageSchema,
  pageQuerySchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { atLeast, orgAccess, requireRole } from "../auth/access.ts";
import { billingAccount, openBillingAccount } from "../billing/account.ts";
import { usageModelLabels } from "../billing/usage-model-labels.ts";
import { checkWebhookUrl } from "../billing/webhook-url.ts";
import { auditStatement } from "../db/audit.ts";
import { iso, keysetCursor } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";
import { billingAutoTopUp } from "./billing-auto-top-up.ts";
import { billingCheckout } from "./billing-checkout.ts";
import { billingLimits } from "./billing-limits.ts";
import { billingPayments } from "./billing-payments.ts";
import { billingUsage } from "./billing-usage.ts";

/** Billing of one org (routes under /api/orgs/:orgId/billing). */
export const billing = new Hono<AppEnv>()
  /** Balance and settings. Any member may read the balance; the assistant's tools do too. */
  .get(
    "/:orgId/billing",
    describeRoute({
      tags: ["Billing"],
      summary: "Balance and settings",
      responses: { 200: json(billingSummarySchema), ...errors(401, 404) },
    }),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      await openBillingAccount(c.env, access.orgId);
      const account = await billingAccount(c.env, access.orgId).summary();
      return c.json({
        orgId: access.orgId,
        currency: "usd",
        availableMicros: account.availableMicros,
        heldMicros: account.heldMicros,
        postedMicros: account.postedMicros,
        ...account.settings,
        // The webhook's URL is often its own credential (a chat service's incoming hook): only
        // owners and admins, who set it, read it back (members get null).
        alertWebhookUrl: atLeast(access.role, "admin") ? account.settings.alertWebhookUrl : null,
        forecast: account.forecast,
        grants: account.grants,
      } satisfies BillingSummary);
    },
  )

  .patch(
    "/:orgId/billing/settings",
    describeRoute({
      tags: ["Billing"],
      summary: "Limits, low-balance threshold, alert webhook",
      responses: { 200: json(billingSettingsResultSchema), ...errors(401, 403, 404) },
    }),
    jsonBody(billingSettingsSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const patch = c.req.valid("json");
      if (typeof patch.alertWebhookUrl === "string") {
        // Checked before the account is addressed: the alarm POSTs to this URL from inside.
        const check = checkWebhookUrl(
          patch.alertWebhookUrl,
          c.env.ALERT_WEBHOOK_ALLOW_PRIVATE ?? "",
        );
        if (!check.ok) {
          throw new AppError("invalid_request", `alertWebhookUrl: ${check.reason}`, {
            field: "alertWebhookUrl",
          });
        }
      }
      const settings = await billingAccount(c.env, access.orgId).updateSettings(
        access.orgId,
        patch,
      );
      await auditStatement(c.env.DB, {
        orgId: access.orgId,
        actorId: userId,
        action: "billing.settings_changed",
        subjectType: "org",
        subjectId: access.orgId,
        data: Object.fromEntries(Object.keys(patch).map((key) => [key, true])),
      }).run();
      return c.json(settings);
    },
  )

  /** The append-only ledger, newest first (owners and admins). */
  .get(
    "/:orgId/billing/ledger",
    describeRoute({
      tags: ["Billing"],
      summary: "Ledger entries, newest first",
      responses: { 200: json(ledgerPageSchema), ...errors(401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const { cursor, limit } = c.req.valid("query");
      // A cursor is a ledger sequence number as this list wrote it: digits only, so "0x10" or "1e3"
      // is refused rather than read as another number.
      const before =
        cursor === undefined ? null : /^[1-9]\d{0,15}$/.test(cursor) ? Number(cursor) : NaN;
      if (before !== null && !Number.isSafeInteger(before)) {
        throw new AppError("invalid_request", "query.cursor: not a cursor from this list", {
          field: "query.cursor",
        });
      }
      const rows = await billingAccount(c.env, access.orgId).entries(before, limit + 1);
      const page = rows.slice(0, limit);
      // A usage entry's memo is its usage key: named as usage by model and activity name it.
      const label = page.some((entry) => entry.kind === "usage" && entry.memo)
        ? await usageModelLabels(c.env, access.orgId)
        : null;
      return c.json({
        items: page.map(
          (entry): LedgerEntry => ({
            id: String(entry.seq),
            kind: entry.kind,
            amountMicros: entry.amountMicros,
            balanceAfterMicros: entry.balanceAfterMicros,
            reference: entry.reference,
            memo: entry.memo,
            memoLabel:
              entry.kind === "usage" && entry.memo && label ? label(entry.memo) : entry.memo,
            createdAt: iso(entry.createdAt),
            grantId: entry.grantId,
            grantSource: entry.grantSource,
            grantEvent: entry.grantEvent,
          }),
        ),
        nextCursor: rows.length > limit ? String(page.at(-1)?.seq) : null,
      });
    },
  )

  // Usage, its CSV export and the activity list.
  .route("/", billingUsage)

  /** Threshold alerts that fired, newest first, with their webhook delivery state (owners and admins). */
  .get(
    "/:orgId/billing/alerts",
    describeRoute({
      tags: ["Billing"],
      summary: "Alerts that fired, with delivery state",
      responses: { 200: json(billingAlertPageSchema), ...errors(401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const { cursor, limit } = c.req.valid("query");
      const after = cursor === undefined ? undefined : keysetCursor(cursor);
      const before = after && { firedAt: after.at, key: after.key };
      const rows = await billingAccount(c.env, access.orgId).alerts(limit + 1, before);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return c.json({
        items: page.map(
          (alert): BillingAlert => ({
            ...alert,
            // Readable since 2026-12-01; the internal key stays as `periodKey`.
            period: alertPeriodLabel(alert),
            periodKey: alert.period,
            message: alertMessage(alert),
            firedAt: iso(alert.firedAt),
            deliveredAt: alert.deliveredAt === null ? null : iso(alert.deliveredAt),
          }),
        ),
        nextCursor: rows.length > limit && last ? `${last.firedAt}.${last.key}` : null,
      });
    },
  )

  // Checkout top-ups and the Stripe customer portal.
  .route("/", billingCheckout)
  .route("/", billingAutoTopUp)
  .route("/", billingPayments)
  .route("/", billingLimits);

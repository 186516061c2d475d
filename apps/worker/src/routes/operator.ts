import {
  type AllowanceResult,
  AppError,
  allowanceResultSchema,
  allowanceSchema,
  type OperatorGrantResult,
  operatorGrantResultSchema,
  operatorGrantSchema,
  pageQuerySchema,
  reversalExcessPageSchema,
  unrecognizedStripeEventPageSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { describeRoute } from "hono-openapi";
import { constantTimeEqual } from "../auth/encoding.ts";
import { billingAccount, openBillingAccount } from "../billing/account.ts";
import { toGrant } from "../billing/grants.ts";
import { auditStatement } from "../db/audit.ts";
import { reversalExcess, unrecognizedEvents } from "../db/stripe-review.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";

async function digest(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
}

/**
 * The platform operator, and only the operator: `Authorization: Bearer <OPERATOR_SECRET>`,
 * compared in constant time (both sides hashed first, so neither the length nor a prefix leaks).
 * An org's owners and admins never get here: free credits are not theirs to give. The secret is
 * required: a Worker without it refuses every request (env.ts `config`).
 */
export const requireOperator = createMiddleware<AppEnv>(async (c, next) => {
  const secret = config(c.env).operatorSecret;
  const header = c.req.header("authorization") ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
  const ok =
    presented.length > 0 && constantTimeEqual(await digest(presented), await digest(secret));
  if (!ok) throw new AppError("unauthorized", "A platform operator's secret is required");
  await next();
});

/** The org named in the path, or `not_found`; operators see every org. */
async function operatorOrg(db: D1Database, orgId: string): Promise<string> {
  const row = await db
    .prepare("SELECT id FROM organizations WHERE id = ?")
    .bind(orgId)
    .first<{ id: string }>();
  if (!row) throw new AppError("not_found", "Organization not found");
  return row.id;
}

/**
 * The platform operator's surface (mounted at /api/operator, outside the member sign-in): grants
 * and the monthly allowance of any org (docs/2026-12-02-billing-features.md, "Credit grants"),
 * and what Stripe did that credits did not follow (docs/2026-12-06-stripe-trust.md).
 */
export const operator = new Hono<AppEnv>()
  .use("*", requireOperator)
  .post(
    "/orgs/:orgId/grants",
    describeRoute({
      tags: ["Operator"],
      summary: "Grant an org promotional credits (platform operator)",
      security: security.operator,
      responses: { 200: json(operatorGrantResultSchema), ...errors(400, 401, 404, 409) },
    }),
    jsonBody(operatorGrantSchema),
    async (c) => {
      const body = c.req.valid("json");
      const expiresAt = body.expiresAt ? Date.parse(body.expiresAt) : null;
      if (expiresAt !== null && expiresAt <= Date.now()) {
        throw new AppError("invalid_request", "expiresAt: must be in the future", {
          field: "expiresAt",
        });
      }
      const orgId = await operatorOrg(c.env.DB, c.req.param("orgId"));
      await openBillingAccount(c.env, orgId);
      const result = await billingAccount(c.env, orgId).promote({
        amountMicros: body.amountMicros,
        expiresAt,
        priority: body.priority,
        idempotencyKey: body.idempotencyKey,
        memo: body.memo,
      });
      if (!result.ok) throw new AppError("conflict", result.message, { field: "idempotencyKey" });
      if (!result.replayed) {
        await auditStatement(c.env.DB, {
          orgId,
          actorId: null,
          action: "billing.grant_created",
          subjectType: "grant",
          subjectId: result.lot.id,
          data: { amountMicros: body.amountMicros, source: "promotion", operator: true },
        }).run();
      }
      return c.json({
        orgId,
        grant: toGrant(result.lot),
        replayed: result.replayed,
      } satisfies OperatorGrantResult);
    },
  )
  .put(
    "/orgs/:orgId/allowance",
    describeRoute({
      tags: ["Operator"],
      summary: "Set an org's monthly allowance (platform operator)",
      security: security.operator,
      responses: { 200: json(allowanceResultSchema), ...errors(400, 401, 404) },
    }),
    jsonBody(allowanceSchema),
    async (c) => {
      const body = c.req.valid("json");
      const orgId = await operatorOrg(c.env.DB, c.req.param("orgId"));
      await openBillingAccount(c.env, orgId);
      const { nextRenewalAt } = await billingAccount(c.env, orgId).setAllowance(body);
      await auditStatement(c.env.DB, {
        orgId,
        actorId: null,
        action: "billing.allowance_set",
        subjectType: "org",
        subjectId: orgId,
        data: { amountMicros: body.amountMicros, billingDay: body.billingDay, operator: true },
      }).run();
      return c.json({
        orgId,
        amountMicros: body.amountMicros,
        billingDay: body.billingDay,
        nextRenewalAt: nextRenewalAt === null ? null : new Date(nextRenewalAt).toISOString(),
      } satisfies AllowanceResult);
    },
  )
  .get(
    "/stripe/unrecognized",
    describeRoute({
      tags: ["Operator"],
      summary:
        "Stripe events acknowledged without effect: payments, cards and charges Parley did not start, refunds and disputes of payments it has no record of (platform operator)",
      security: security.operator,
      responses: { 200: json(unrecognizedStripeEventPageSchema), ...errors(400, 401) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { cursor, limit } = c.req.valid("query");
      return c.json(await unrecognizedEvents(c.env.DB, cursor, limit));
    },
  )
  .get(
    "/stripe/excess",
    describeRoute({
      tags: ["Operator"],
      summary:
        "Payments whose refunds and disputes at Stripe took more than they paid: the excess was not taken from credits (platform operator)",
      security: security.operator,
      responses: { 200: json(reversalExcessPageSchema), ...errors(400, 401) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { cursor, limit } = c.req.valid("query");
      return c.json(await reversalExcess(c.env.DB, cursor, limit));
    },
  );

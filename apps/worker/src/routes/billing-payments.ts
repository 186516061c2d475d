import { type Payment, paymentPageSchema, smallPageQuerySchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type Stripe from "stripe";
import { orgAccess, requireRole } from "../auth/access.ts";
import { stripeClient } from "../billing/stripe.ts";
import { iso, keysetCursor } from "../db/pagination.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { query } from "../http/validate.ts";

/**
 * The most payments one page reads receipts for at Stripe (one call each, in parallel): a larger
 * `limit` is a 400, as every list's out-of-range limit is.
 */
const MAX_PAYMENTS_PAGE = 25;

interface PaymentRow {
  payment_intent_id: string;
  amount_micros: number;
  created_at: number;
  receipt_url: string | null;
  refunded_micros: number;
  disputed_micros: number;
  reversed_micros: number;
  source: Payment["source"];
}

/** Disputed while a dispute's funds stand withdrawn; a won dispute's payment is itself again. */
const statusOf = (row: PaymentRow): Payment["status"] =>
  row.disputed_micros > 0
    ? "disputed"
    : row.refunded_micros >= row.amount_micros
      ? "refunded"
      : row.refunded_micros > 0
        ? "partially_refunded"
        : "paid";

const toPayment = (row: PaymentRow): Payment => ({
  id: row.payment_intent_id,
  amountMicros: row.amount_micros,
  refundedMicros: row.refunded_micros,
  disputedMicros: row.disputed_micros,
  reversedMicros: row.reversed_micros,
  status: statusOf(row),
  source: row.source,
  receiptUrl: row.receipt_url,
  createdAt: iso(row.created_at),
});

/**
 * The receipt of each payment that has none recorded yet, read from Stripe (the charge's hosted
 * receipt) and kept, so a payment's receipt is asked of Stripe once. A payment Stripe cannot
 * answer for now is listed without its receipt, and asked again next time.
 */
async function fillReceipts(env: Env, rows: PaymentRow[]): Promise<void> {
  const missing = rows.filter((row) => row.receipt_url === null);
  if (missing.length === 0) return;
  const stripe = stripeClient(config(env));
  const found = await Promise.all(
    missing.map(async (row) => {
      const charges: Stripe.ApiList<Stripe.Charge> | null = await stripe.charges
        .list({ payment_intent: row.payment_intent_id, limit: 1 })
        .catch(() => null);
      return { row, url: charges?.data[0]?.receipt_url ?? null };
    }),
  );
  const statements = found.flatMap(({ row, url }) => {
    if (url === null || !/^https?:\/\//.test(url)) return [];
    row.receipt_url = url;
    return [
      env.DB.prepare(
        "UPDATE stripe_payments SET receipt_url = ? WHERE payment_intent_id = ? AND receipt_url IS NULL",
      ).bind(url, row.payment_intent_id),
    ];
  });
  if (statements.length > 0) await env.DB.batch(statements);
}

/** `GET /api/orgs/:orgId/billing/payments`: the org's paid top-ups with their receipts. */
export const billingPayments = new Hono<AppEnv>().get(
  "/:orgId/billing/payments",
  describeRoute({
    tags: ["Billing"],
    summary:
      "Paid top-ups (Checkout and automatic), newest first, with Stripe's receipt of each (owners and admins)",
    responses: { 200: json(paymentPageSchema), ...errors(400, 401, 403, 404) },
  }),
  query(smallPageQuerySchema(MAX_PAYMENTS_PAGE)),
  async (c) => {
    const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
    requireRole(access, "admin");
    const { cursor, limit } = c.req.valid("query");
    const after = cursor === undefined ? null : keysetCursor(cursor);
    const { results } = await c.env.DB.prepare(
      `SELECT payment_intent_id, amount_micros, created_at, receipt_url, refunded_micros,
         disputed_micros, reversed_micros, source
       FROM stripe_payments WHERE org_id = ?1
         AND (?2 IS NULL OR created_at < ?2 OR (created_at = ?2 AND payment_intent_id < ?3))
       ORDER BY created_at DESC, payment_intent_id DESC LIMIT ?4`,
    )
      .bind(access.orgId, after?.at ?? null, after?.key ?? "", limit + 1)
      .all<PaymentRow>();
    const rows = results.slice(0, limit);
    await fillReceipts(c.env, rows);
    const last = rows.at(-1);
    return c.json({
      items: rows.map(toPayment),
      nextCursor:
        results.length > limit && last ? `${last.created_at}.${last.payment_intent_id}` : null,
    });
  },
);

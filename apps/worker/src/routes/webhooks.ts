import {
  isStripeLedgerAction,
  mapStripeEvent,
  type StripeAutoTopUpStateAction,
  type StripeLedgerAction,
} from "@parley/billing";
import { AppError, isId, stripeWebhookResultSchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type Stripe from "stripe";
import { billingAccount } from "../billing/account.ts";
import { savedCardOf } from "../billing/saved-card.ts";
import { stripeClient, webCrypto } from "../billing/stripe.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { mailReceipts } from "../mail/billing-mail.ts";

/** Stripe's default tolerance: a signature older than this is refused, so a captured one can't be replayed later. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

const log = (fields: Record<string, string | number | null>) =>
  console.log(JSON.stringify({ level: "info", source: "stripe-webhook", ...fields }));

/** Finds the org a refund or dispute belongs to when the event itself does not name it. */
async function resolveOrg(db: D1Database, action: StripeLedgerAction): Promise<string | null> {
  if (action.orgId) return action.orgId;
  if (action.type === "topup" || action.type === "auto_topup" || !action.paymentIntentId) {
    return null;
  }
  const row = await db
    .prepare("SELECT org_id FROM stripe_payments WHERE payment_intent_id = ?")
    .bind(action.paymentIntentId)
    .first<{ org_id: string }>();
  return row?.org_id ?? null;
}

/**
 * Whether an org id from an event names an org of ours. A correctly signed event can still name an
 * org that never existed (metadata set outside our Checkout) or one not even shaped like an id;
 * writing for it failed on D1's foreign key (a 500, which Stripe retries for days) or would create
 * a BillingAccount for it (addressing a Durable Object creates it).
 */
async function orgExists(db: D1Database, orgId: string): Promise<boolean> {
  if (!isId("org", orgId)) return false;
  const row = await db
    .prepare("SELECT 1 AS found FROM organizations WHERE id = ?")
    .bind(orgId)
    .first();
  return row !== null;
}

/**
 * What became of a paid top-up, for the payments list (routes/billing-payments.ts): its refunds'
 * running total and whether a dispute stands. Idempotent like the ledger's own entries: a
 * replayed or out-of-order refund event never lowers the total (refund totals only grow).
 */
async function notePaymentOutcome(db: D1Database, action: StripeLedgerAction): Promise<void> {
  if (action.type === "topup" || action.type === "auto_topup" || !action.paymentIntentId) return;
  const statement =
    action.type === "refund"
      ? db
          .prepare(
            "UPDATE stripe_payments SET refunded_micros = MAX(refunded_micros, ?) WHERE payment_intent_id = ?",
          )
          .bind(Math.abs(action.totalMicros), action.paymentIntentId)
      : db
          .prepare("UPDATE stripe_payments SET disputed = ? WHERE payment_intent_id = ?")
          .bind(action.type === "dispute" ? 1 : 0, action.paymentIntentId);
  await statement.run();
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A card saved, or an automatic top-up that failed: the org's automatic top-up changes, no money
 * moves. The card is read from Stripe (the SetupIntent the session completed), and kept only if
 * it belongs to the org's own Stripe customer.
 */
async function applyAutoTopUpEvent(
  env: Env,
  orgId: string,
  action: StripeAutoTopUpStateAction,
): Promise<"applied" | "reject"> {
  const account = billingAccount(env, orgId);
  if (action.type === "auto_topup_failed") {
    await account.autoTopUpFailed(action);
    return "applied";
  }
  const org = await env.DB.prepare("SELECT stripe_customer_id FROM organizations WHERE id = ?")
    .bind(orgId)
    .first<{ stripe_customer_id: string | null }>();
  const intent = await stripeClient(config(env)).setupIntents.retrieve(action.setupIntentId, {
    expand: ["payment_method"],
  });
  const card = savedCardOf(intent);
  if (card === null || card.customerId !== org?.stripe_customer_id) return "reject";
  await account.saveCard(card);
  return "applied";
}

export const webhooks = new Hono<AppEnv>().post(
  "/stripe",
  describeRoute({
    tags: ["Webhooks"],
    summary: "Stripe's signed events",
    // No Parley caller: Stripe's signature over the raw body is the proof.
    security: security.public,
    parameters: [
      { in: "header", name: "stripe-signature", required: true, schema: { type: "string" } },
    ],
    responses: { 200: json(stripeWebhookResultSchema), ...errors(400) },
  }),
  async (c) => {
    const signature = c.req.header("stripe-signature");
    if (!signature) throw new AppError("invalid_request", "Missing Stripe-Signature header");
    const cfg = config(c.env);
    const payload = await c.req.text();
    let event: Stripe.Event;
    try {
      event = await stripeClient(cfg).webhooks.constructEventAsync(
        payload,
        signature,
        cfg.stripe.webhookSecret,
        SIGNATURE_TOLERANCE_SECONDS,
        webCrypto,
      );
    } catch (cause) {
      throw new AppError("invalid_request", "Invalid Stripe signature", { cause });
    }

    // Signed, but still parsed from text: an event without a string id and type is not one.
    if (!isRecord(event) || typeof event.id !== "string" || typeof event.type !== "string") {
      log({ event: null, type: null, outcome: "reject", reason: "malformed" });
      return c.json({ received: true, outcome: "reject" });
    }
    const mapping = mapStripeEvent(event);
    if (mapping.type === "ignore" || mapping.type === "reject") {
      // Answer 2xx so Stripe stops retrying; a rejected event is logged for a human.
      log({ event: event.id, type: event.type, outcome: mapping.type, reason: mapping.reason });
      return c.json({ received: true, outcome: mapping.type });
    }
    if (!isStripeLedgerAction(mapping)) {
      if (!(await orgExists(c.env.DB, mapping.orgId))) {
        log({ event: event.id, type: event.type, outcome: "unknown_org", reason: null });
        return c.json({ received: true, outcome: "unknown_org" });
      }
      const outcome = await applyAutoTopUpEvent(c.env, mapping.orgId, mapping);
      const reason = outcome === "reject" ? "not_the_orgs_card" : null;
      log({ event: event.id, type: event.type, outcome, reason });
      return c.json({ received: true, outcome });
    }
    const orgId = await resolveOrg(c.env.DB, mapping);
    if (!orgId) {
      log({ event: event.id, type: event.type, outcome: "unknown_org", reason: null });
      // Stripe does not order deliveries: a refund or dispute can arrive before the payment it names
      // is recorded. Acknowledging it would drop it for good; a non-2xx answer makes Stripe redeliver.
      if (mapping.type !== "topup")
        throw new AppError("conflict", "The payment this event refers to is not recorded yet");
      return c.json({ received: true, outcome: "unknown_org" });
    }
    if (!(await orgExists(c.env.DB, orgId))) {
      // Before anything is written or any BillingAccount addressed. A retry cannot make the org
      // exist, so the event is acknowledged; the log line (event id, type, outcome, never the bogus
      // org id itself) is for a human to look at.
      const reason = isId("org", orgId) ? "no_such_org" : "not_an_org_id";
      log({ event: event.id, type: event.type, outcome: "unknown_org", reason });
      return c.json({ received: true, outcome: "unknown_org" });
    }
    if ((mapping.type === "topup" || mapping.type === "auto_topup") && mapping.paymentIntentId) {
      await c.env.DB.prepare(
        `INSERT INTO stripe_payments
           (payment_intent_id, checkout_session_id, org_id, amount_micros, created_at, source)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
        .bind(
          mapping.paymentIntentId,
          mapping.type === "topup" ? mapping.checkoutSessionId : null,
          orgId,
          mapping.amountMicros,
          Date.now(),
          mapping.type === "topup" ? "checkout" : "auto_top_up",
        )
        .run();
    }
    const result = await billingAccount(c.env, orgId).applyStripeEvent(
      { id: event.id, type: event.type },
      { ...mapping, orgId },
    );
    await notePaymentOutcome(c.env.DB, mapping);
    // A credited top-up's receipt to the owners who asked for it, after the answer (2026-12-06).
    if (
      result.status === "applied" &&
      result.result.ok &&
      (mapping.type === "topup" || mapping.type === "auto_topup") &&
      mapping.paymentIntentId
    ) {
      const payment = {
        paymentIntentId: mapping.paymentIntentId,
        amountMicros: mapping.amountMicros,
        automatic: mapping.type === "auto_topup",
      };
      c.executionCtx.waitUntil(mailReceipts(c.env, orgId, payment).catch(() => 0));
    }
    log({ event: event.id, type: event.type, outcome: result.status, reason: null });
    return c.json({ received: true, outcome: result.status });
  },
);

import { mapStripeEvent, type StripeEventMapping } from "@parley/billing";
import { AppError, stripeWebhookResultSchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type Stripe from "stripe";
import { stripeClient, webCrypto } from "../billing/stripe.ts";
import {
  autoTopUpFailed,
  creditAutoTopUp,
  creditCheckout,
  type Handled,
  reverse,
  type StripeEventRef,
  saveCard,
} from "../billing/stripe-webhook.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { mailReceipts } from "../mail/billing-mail.ts";

type StripeActionMapping = Exclude<StripeEventMapping, { type: "ignore" } | { type: "reject" }>;

/** Stripe's default tolerance: a signature older than this is refused, so a captured one can't be replayed later. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

const log = (fields: Record<string, string | number | null>) =>
  console.log(JSON.stringify({ level: "info", source: "stripe-webhook", ...fields }));

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What the mapped event does, from Parley's records (billing/stripe-webhook.ts). */
function handle(env: Env, event: StripeEventRef, mapping: StripeActionMapping): Promise<Handled> {
  switch (mapping.type) {
    case "topup":
      return creditCheckout(env, event, mapping);
    case "auto_topup":
      return creditAutoTopUp(env, event, mapping);
    case "auto_topup_failed":
      return autoTopUpFailed(env, event, mapping);
    case "card_saved":
      return saveCard(env, event, mapping);
    default:
      return reverse(env, event, mapping);
  }
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
    responses: { 200: json(stripeWebhookResultSchema), ...errors(400, 409) },
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
    const ref = { id: event.id, type: event.type };
    const { outcome, reason, credited } = await handle(c.env, ref, mapping);
    // A credited top-up's receipt to the owners who asked for it, after the answer (2026-12-06).
    if (credited) {
      const { orgId, ...payment } = credited;
      c.executionCtx.waitUntil(mailReceipts(c.env, orgId, payment).catch(() => 0));
    }
    // One content-free line: the event, what happened and why; never a payload or an org value.
    log({ event: event.id, type: event.type, outcome, reason });
    return c.json({ received: true, outcome });
  },
);

import {
  AppError,
  checkoutSchema,
  checkoutSessionSchema,
  microsRangeRule,
  portalSessionSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import Stripe from "stripe";
import { notFound, orgAccess, requireRole } from "../auth/access.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { isIdempotencyConflict, stripeClient } from "../billing/stripe.ts";
import { recordCheckout } from "../billing/stripe-records.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { jsonBody, noBody } from "../http/validate.ts";

/** Where Checkout and the portal send the browser back to (http/public-base.ts). */
const returnBase = (c: Context<AppEnv>): string => publicBase(c, "Billing");

/** An org's payments at Stripe: Checkout top-ups and the customer portal (under billing.ts). */
export const billingCheckout = new Hono<AppEnv>()
  /**
   * Starts a Stripe Checkout top-up. The amount is only a request: credits are granted by the
   * verified webhook, for what Stripe says was paid.
   */
  .post(
    "/:orgId/billing/checkout",
    describeRoute({
      tags: ["Billing"],
      summary: "A Stripe Checkout top-up",
      responses: { 201: json(checkoutSessionSchema), ...errors(401, 403, 404, 409) },
    }),
    jsonBody(checkoutSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const { amountMicros } = c.req.valid("json");
      const cfg = config(c.env);
      if (amountMicros < cfg.checkoutMinMicros || amountMicros > cfg.checkoutMaxMicros) {
        throw new AppError(
          "invalid_request",
          `amountMicros: ${microsRangeRule(cfg.checkoutMinMicros, cfg.checkoutMaxMicros)}`,
          { field: "amountMicros" },
        );
      }
      const idempotencyKey = c.req.header("idempotency-key") ?? crypto.randomUUID();
      if (!/^[\w-]{8,100}$/.test(idempotencyKey)) {
        throw new AppError("invalid_request", "Idempotency-Key: 8 to 100 letters, digits, - or _", {
          field: "Idempotency-Key",
        });
      }
      const stripe = stripeClient(cfg);
      const base = returnBase(c);
      const userKey = await keyedHash(c.env.ERASURE_HASH_KEY, "checkout", userId);
      const creating = withStripeCustomer(c, access.orgId, (customer) =>
        stripe.checkout.sessions.create(
          {
            mode: "payment",
            customer,
            client_reference_id: access.orgId,
            // Only the org: nothing at Stripe names a member (erasure could not reach it there).
            metadata: { orgId: access.orgId },
            payment_intent_data: { metadata: { orgId: access.orgId } },
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: "usd",
                  unit_amount: amountMicros / 10_000,
                  product_data: { name: "Parley credits" },
                },
              },
            ],
            success_url: `${base}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
            cancel_url: `${base}/billing?checkout=cancelled`,
          },
          {
            // Per caller, without naming them at Stripe (which keeps idempotency keys for a day), and
            // per customer: the retry with a replaced customer must not meet the refusal Stripe may
            // have kept for the dead one under the same key (nor be refused as "other parameters").
            idempotencyKey: `checkout-${access.orgId}-${userKey}-${customer}-${idempotencyKey}`,
          },
        ),
      );
      const session = await creating.catch((cause: unknown) => {
        // Stripe refuses a key reused with other parameters (another amount): the client's mistake.
        if (!isIdempotencyConflict(cause)) throw cause;
        throw new AppError(
          "conflict",
          "Idempotency-Key: already used for a different checkout (another amount); use a new key",
          { field: "Idempotency-Key", cause },
        );
      });
      if (!session.url) throw new AppError("internal", "Stripe returned no Checkout URL");
      // Before the URL is handed out: only a session recorded here is ever credited, and only
      // to this org (billing/stripe-webhook.ts), whatever its client_reference_id says.
      await recordCheckout(c.env.DB, session.id, {
        orgId: access.orgId,
        mode: "payment",
        requestedMicros: amountMicros,
      });
      return c.json({ id: session.id, url: session.url }, 201);
    },
  )

  /** A Stripe customer portal link, for receipts and saved cards (owners and admins). */
  .post(
    "/:orgId/billing/portal",
    describeRoute({
      tags: ["Billing"],
      summary: "The Stripe customer portal",
      responses: { 201: json(portalSessionSchema), ...errors(401, 403, 404) },
    }),
    noBody,
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const base = returnBase(c);
      const stripe = stripeClient(config(c.env));
      const portal = await withStripeCustomer(c, access.orgId, (customer) =>
        stripe.billingPortal.sessions.create({ customer, return_url: `${base}/billing` }),
      );
      return c.json({ url: portal.url }, 201);
    },
  );

interface OrgCustomer {
  name: string;
  stripe_customer_id: string | null;
}

async function orgCustomer(c: Context<AppEnv>, orgId: string): Promise<OrgCustomer> {
  const org = await c.env.DB.prepare(
    "SELECT name, stripe_customer_id FROM organizations WHERE id = ?",
  )
    .bind(orgId)
    .first<OrgCustomer>();
  if (!org) throw notFound("Organization");
  return org;
}

/**
 * Creates a Stripe customer for the org and stores it in place of `replacing` (null: the org had
 * none), conditionally, so requests racing store one; returns the one stored. Requests that race
 * share the idempotency key, so Stripe makes one customer for them.
 */
async function storeNewCustomer(
  c: Context<AppEnv>,
  orgId: string,
  org: OrgCustomer,
  replacing: string | null,
): Promise<string> {
  const customer = await stripeClient(config(c.env)).customers.create(
    { name: org.name, metadata: { orgId } },
    // A new key for a replacement: the first key would replay the customer that no longer exists.
    {
      idempotencyKey:
        replacing === null ? `customer-${orgId}` : `customer-${orgId}-after-${replacing}`,
    },
  );
  const stored = await c.env.DB.prepare(
    `UPDATE organizations SET stripe_customer_id = ?1 WHERE id = ?2 AND stripe_customer_id IS ?3
     RETURNING stripe_customer_id`,
  )
    .bind(customer.id, orgId, replacing)
    .first<{ stripe_customer_id: string }>();
  if (stored) return stored.stripe_customer_id;
  // Another request stored one first (the same customer, or a replacement of its own).
  return (await orgCustomer(c, orgId)).stripe_customer_id ?? customer.id;
}

/** The org's Stripe customer, created on first use (idempotently, so a race makes one customer). */
async function stripeCustomer(c: Context<AppEnv>, orgId: string): Promise<string> {
  const org = await orgCustomer(c, orgId);
  return org.stripe_customer_id ?? storeNewCustomer(c, orgId, org, null);
}

/** Whether Stripe refused a request because the customer it names does not exist (any more). */
const isMissingCustomer = (error: unknown): boolean =>
  error instanceof Stripe.errors.StripeInvalidRequestError &&
  error.code === "resource_missing" &&
  error.param === "customer";

/**
 * Runs `use` with the org's Stripe customer. The stored customer can vanish at Stripe: deleted in
 * the dashboard (or, locally, lost when the Stripe stand-in restarts), and every checkout and
 * portal link then failed with 500 ("No such customer"). When Stripe says so, the org gets a new
 * customer, stored in place of the dead id only if that is still the one stored, and `use` runs
 * once more with it. Payments already made are not at stake: credits come from the webhook, which
 * finds the org from the session Parley recorded, not from the customer.
 */
export async function withStripeCustomer<T>(
  c: Context<AppEnv>,
  orgId: string,
  use: (customer: string) => Promise<T>,
): Promise<T> {
  const customer = await stripeCustomer(c, orgId);
  try {
    return await use(customer);
  } catch (error) {
    if (!isMissingCustomer(error)) throw error;
    const org = await orgCustomer(c, orgId);
    // Already replaced by a request that met the same refusal: use that one.
    const next =
      org.stripe_customer_id !== null && org.stripe_customer_id !== customer
        ? org.stripe_customer_id
        : await storeNewCustomer(c, orgId, org, customer);
    console.log(
      JSON.stringify({
        level: "info",
        source: "stripe-customer",
        orgId,
        replaced: customer,
        by: next,
      }),
    );
    return use(next);
  }
}

import type { AutoTopUpState } from "@parley/billing";
import {
  AppError,
  type AutoTopUp,
  autoTopUpSchema,
  autoTopUpSettingsSchema,
  checkoutSessionSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import Stripe from "stripe";
import { orgAccess, requireRole } from "../auth/access.ts";
import { billingAccount, openBillingAccount } from "../billing/account.ts";
import { publicCard } from "../billing/saved-card.ts";
import { stripeClient } from "../billing/stripe.ts";
import { recordCheckout } from "../billing/stripe-records.ts";
import { auditStatement } from "../db/audit.ts";
import { iso } from "../db/pagination.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { jsonBody, noBody } from "../http/validate.ts";
import { withStripeCustomer } from "./billing-checkout.ts";

/**
 * Automatic top-up (issue 16.1; docs/2026-12-02-billing-features.md, "Automatic top-up"): owners
 * and admins save a card through Checkout in setup mode, and set a threshold, an amount and a
 * monthly cap. The charges themselves are the BillingAccount's (billing/auto-top-up.ts).
 */

const PAUSE_MESSAGES: Record<string, string> = {
  authentication_required:
    "The card's bank asked for the cardholder's authentication, which an automatic charge cannot give. Save the card again, or another one.",
  card_declined:
    "The card was declined. Save another card, or save automatic top-up on again to retry.",
  no_saved_card: "No card is saved. Save a card to turn automatic top-up on.",
};

function toAutoTopUp(state: AutoTopUpState): AutoTopUp {
  const { settings, card, paused } = state;
  return {
    ...settings,
    card: card && publicCard(card),
    paused: paused && {
      code: paused.code,
      message:
        PAUSE_MESSAGES[paused.code] ??
        `Stripe refused the charge (${paused.code}). Save a card again, or turn automatic top-up on again.`,
      at: iso(paused.at),
    },
    monthChargedMicros: state.monthChargedMicros,
    charges: state.charges.map((charge) => ({
      id: charge.key,
      amountMicros: charge.amountMicros,
      status: charge.status,
      failureCode: charge.failureCode,
      createdAt: iso(charge.createdAt),
    })),
  };
}

async function adminOf(c: Context<AppEnv>): Promise<{ orgId: string; userId: string }> {
  const { userId } = c.get("caller");
  const access = await orgAccess(c.env.DB, userId, c.req.param("orgId") ?? "");
  requireRole(access, "admin");
  return { orgId: access.orgId, userId };
}

const audit = (
  c: Context<AppEnv>,
  orgId: string,
  actorId: string,
  data: Record<string, number | boolean | null>,
  action: string,
) =>
  auditStatement(c.env.DB, {
    orgId,
    actorId,
    action,
    subjectType: "org",
    subjectId: orgId,
    data,
  }).run();

export const billingAutoTopUp = new Hono<AppEnv>()
  .get(
    "/:orgId/billing/auto-top-up",
    describeRoute({
      tags: ["Billing"],
      summary: "Automatic top-up: settings, the saved card, a pause and the latest charges",
      responses: { 200: json(autoTopUpSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { orgId } = await adminOf(c);
      return c.json(toAutoTopUp(await billingAccount(c.env, orgId).autoTopUp()));
    },
  )
  .put(
    "/:orgId/billing/auto-top-up",
    describeRoute({
      tags: ["Billing"],
      summary: "Sets automatic top-up (turning it on needs a saved card)",
      responses: { 200: json(autoTopUpSchema), ...errors(400, 401, 403, 404, 409) },
    }),
    jsonBody(autoTopUpSettingsSchema),
    async (c) => {
      const { orgId, userId } = await adminOf(c);
      const settings = c.req.valid("json");
      await openBillingAccount(c.env, orgId);
      const result = await billingAccount(c.env, orgId).configureAutoTopUp(settings);
      if (!result.ok) {
        throw new AppError("conflict", "Save a card before turning automatic top-up on", {
          field: "enabled",
        });
      }
      await audit(c, orgId, userId, settings, "billing.auto_top_up_changed");
      return c.json(toAutoTopUp(result.state));
    },
  )
  .post(
    "/:orgId/billing/auto-top-up/card",
    describeRoute({
      tags: ["Billing"],
      summary: "A Stripe Checkout page (setup mode) that saves a card for automatic top-up",
      responses: { 201: json(checkoutSessionSchema), ...errors(401, 403, 404) },
    }),
    noBody,
    async (c) => {
      const { orgId } = await adminOf(c);
      const base = publicBase(c, "Billing");
      const stripe = stripeClient(config(c.env));
      const session = await withStripeCustomer(c, orgId, (customer) =>
        stripe.checkout.sessions.create({
          mode: "setup",
          customer,
          currency: "usd",
          // Only the org: nothing at Stripe names a member. The webhook keeps the card.
          metadata: { orgId },
          setup_intent_data: { metadata: { orgId } },
          success_url: `${base}/billing?card=saved#settings`,
          cancel_url: `${base}/billing?card=cancelled#settings`,
        }),
      );
      if (!session.url) throw new AppError("internal", "Stripe returned no Checkout URL");
      // Only a setup session recorded here saves a card, and only for this org.
      await recordCheckout(c.env.DB, session.id, { orgId, mode: "setup", requestedMicros: null });
      return c.json({ id: session.id, url: session.url }, 201);
    },
  )
  .delete(
    "/:orgId/billing/auto-top-up/card",
    describeRoute({
      tags: ["Billing"],
      summary: "Forgets the saved card; automatic top-up turns off with it",
      responses: { 200: json(autoTopUpSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { orgId, userId } = await adminOf(c);
      const account = billingAccount(c.env, orgId);
      const { card } = await account.autoTopUp();
      const state = await account.removeCard();
      // Detached at Stripe too, so it can never be charged; one already gone is fine.
      if (card) {
        await stripeClient(config(c.env))
          .paymentMethods.detach(card.paymentMethodId)
          .catch((error: unknown) => {
            if (!(error instanceof Stripe.errors.StripeInvalidRequestError)) throw error;
          });
      }
      await audit(c, orgId, userId, { enabled: false }, "billing.card_removed");
      return c.json(toAutoTopUp(state));
    },
  );

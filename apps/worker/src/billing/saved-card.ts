import type { SavedCard } from "@parley/billing";
import type Stripe from "stripe";
import { iso } from "../db/pagination.ts";

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  typeof value === "string" ? value : (value?.id ?? null);

/**
 * The card a completed SetupIntent saved (retrieved with `expand: ["payment_method"]`), as
 * automatic top-up keeps it; null unless it succeeded, names a customer and saved a card.
 */
export function savedCardOf(intent: Stripe.SetupIntent): SavedCard | null {
  const method = intent.payment_method;
  const customerId = idOf(intent.customer);
  if (intent.status !== "succeeded" || customerId === null) return null;
  if (typeof method !== "object" || method === null || method.card === undefined) return null;
  const { card } = method;
  if (card === null) return null;
  return {
    customerId,
    paymentMethodId: method.id,
    brand: card.brand,
    last4: card.last4,
    expMonth: card.exp_month,
    expYear: card.exp_year,
    savedAt: intent.created * 1000,
  };
}

/** A saved card as the API and an org's archive show it: what Stripe says of it, never its number. */
export const publicCard = (card: SavedCard) => ({
  brand: card.brand,
  last4: card.last4,
  expMonth: card.expMonth,
  expYear: card.expYear,
  savedAt: iso(card.savedAt),
});

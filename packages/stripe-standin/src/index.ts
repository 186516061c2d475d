/**
 * @parley/stripe-standin: a local stand-in for the part of Stripe's API Parley uses (Checkout
 * Sessions in payment and setup mode, saved cards charged off-session, PaymentIntents, Charges, refunds, customers, the billing portal,
 * events), driven by the real `stripe` client, with a pay page and webhooks signed as Stripe
 * signs them. `startStripeStandin` opens a socket; the rest is pure.
 */

export { DISPUTE_FEE, type DisputeOptions } from "./disputes.ts";
export { StripeApiError, type StripeErrorBody, type StripeErrorType } from "./errors.ts";
export {
  decodeForm,
  type FormObject,
  type FormValue,
} from "./form.ts";
export type {
  BalanceTransaction,
  BillingPortalSession,
  Charge,
  CheckoutSession,
  Customer,
  DeletedCustomer,
  Dispute,
  LineItem,
  PaymentIntent,
  PaymentMethod,
  Refund,
  SetupIntent,
  StripeEvent,
  StripeEventType,
  StripeList,
  StripeObject,
} from "./objects.ts";
export {
  DEFAULT_API_VERSION,
  type StripeStandin,
  type StripeStandinOptions,
  startStripeStandin,
} from "./server.ts";
export {
  type CardBehaviour,
  DEFAULT_TEST_CARD,
  formatAmount,
  type PayOptions,
  type PayOutcome,
  type PayResult,
  type SetupResult,
} from "./store.ts";
export {
  DEFAULT_RETRY,
  type Delivery,
  eventPayload,
  type RetryPolicy,
  signatureHeader,
} from "./webhooks.ts";

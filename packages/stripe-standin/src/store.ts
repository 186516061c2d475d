/**
 * The stand-in's state and the payment flows that change it: Checkout Sessions, the
 * PaymentIntent and Charge a payment creates, cards saved in setup mode (PaymentMethod and
 * SetupIntent) and off-session charges of them, refunds, disputes, customers, portal sessions,
 * and the Event every change emits. Inputs are already validated (api.ts turns Stripe's form
 * parameters into them); no I/O happens here, events go out through `onEvent`.
 */
import { DisputeDesk } from "./disputes.ts";
import { invalidRequest, noSuch, StripeApiError } from "./errors.ts";
import {
  type BillingPortalSession,
  type CardDetails,
  type Charge,
  type CheckoutMode,
  type CheckoutSession,
  type Customer,
  type DeletedCustomer,
  type Dispute,
  type LineItem,
  type Metadata,
  newId,
  type PaymentIntent,
  type PaymentMethod,
  type PaymentMethodDetails,
  type Refund,
  type RefundReason,
  type SetupIntent,
  type StripeEvent,
  type StripeEventType,
  type StripeList,
  type StripeObject,
} from "./objects.ts";

/** The API request behind a change, copied into `event.request`. */
export type RequestInfo = { id: string | null; idempotencyKey: string | null };

const CUSTOMER_ACTION: RequestInfo = { id: null, idempotencyKey: null };

export type NewCustomer = {
  email: string | null;
  name: string | null;
  description: string | null;
  phone: string | null;
  metadata: Metadata;
};

/** The new values of an update; `null` unsets a field. Metadata is the whole new set. */
export type CustomerChanges = Partial<
  Pick<Customer, "email" | "name" | "description" | "phone" | "metadata">
>;

/** The customer's fields an update sets or unsets (`""` on the wire, `null` here). */
export const CUSTOMER_TEXT_FIELDS = ["email", "name", "description", "phone"] as const;

export type NewLineItem = {
  name: string;
  description: string | null;
  currency: string;
  unitAmount: number;
  quantity: number;
};

export type NewCheckoutSession = {
  mode: CheckoutMode;
  /** None in setup mode. */
  lineItems: NewLineItem[];
  /** Setup mode only (payment mode takes the line items' currency). */
  currency: string | null;
  successUrl: string | null;
  cancelUrl: string | null;
  clientReferenceId: string | null;
  metadata: Metadata;
  customer: string | null;
  customerEmail: string | null;
  customerCreation: "if_required" | "always" | null;
  paymentIntentData: {
    metadata: Metadata;
    description: string | null;
    receiptEmail: string | null;
  };
  setupIntentData: { metadata: Metadata; description: string | null };
  expiresAt: number | null;
  locale: string | null;
  submitType: string | null;
  paymentMethodTypes: string[];
};

export type NewRefund = {
  charge: string | null;
  paymentIntent: string | null;
  amount: number | null;
  reason: RefundReason | null;
  metadata: Metadata;
};

/**
 * How a test payment ends. `fail` alone is a declined card (the session stays open and can be
 * paid again); `async` is a delayed method (bank debit): the session completes unpaid, then
 * succeeds, or fails when `fail` is set too. `card` is a test card number (spaces allowed,
 * default 4242 4242 4242 4242): in setup mode the card saved, in payment mode the card paying
 * (its last 4 digits, and a decline for the declining test cards).
 */
export type PayOptions = { async?: boolean; fail?: boolean; email?: string; card?: string };

export type PayOutcome = "paid" | "declined" | "async_succeeded" | "async_failed";

export type PayResult = {
  outcome: PayOutcome;
  session: CheckoutSession;
  paymentIntent: PaymentIntent;
  charge: Charge;
};

/** A setup-mode session completed: the card saved, and the SetupIntent that saved it. */
export type SetupResult = {
  outcome: "setup_succeeded";
  session: CheckoutSession;
  setupIntent: SetupIntent;
  paymentMethod: PaymentMethod;
};

/**
 * How a saved card behaves when it is charged, after Stripe's documented test cards: 4242 4242
 * 4242 4242 (and any other 16 digits) succeeds; the others attach fine and then fail every charge.
 */
export type CardBehaviour =
  | "succeeds"
  | "declined"
  | "insufficient_funds"
  | "authentication_required";

export const DEFAULT_TEST_CARD = "4242424242424242";

const TEST_CARDS: Readonly<Record<string, CardBehaviour>> = {
  "4000000000000341": "declined",
  "4000000000009995": "insufficient_funds",
  "4000002760003184": "authentication_required",
};

type CardFailure = { code: string; declineCode: string; message: string };

/** Stripe's error for each failing test card (docs: "Testing", "Declined payments"). */
const CARD_FAILURES: Readonly<Record<Exclude<CardBehaviour, "succeeds">, CardFailure>> = {
  declined: {
    code: "card_declined",
    declineCode: "generic_decline",
    message: "Your card was declined.",
  },
  insufficient_funds: {
    code: "card_declined",
    declineCode: "insufficient_funds",
    message: "Your card has insufficient funds.",
  },
  authentication_required: {
    code: "authentication_required",
    declineCode: "authentication_required",
    message: "Your card was declined. This transaction requires authentication.",
  },
};

/**
 * The digits of a typed or sent test card number (spaces are stripped, as a card field strips
 * them). Anything but 16 digits is refused as Stripe's card form refuses it, before any state
 * changes.
 */
export function testCardNumber(input: string | undefined): string {
  const digits = (input ?? DEFAULT_TEST_CARD).replace(/\s+/g, "");
  if (!/^\d{16}$/.test(digits)) {
    throw new StripeApiError(402, "card_error", "Your card number is invalid.", {
      code: "invalid_number",
      param: "card",
    });
  }
  return digits;
}

export function cardBehaviour(number: string): CardBehaviour {
  return TEST_CARDS[number] ?? "succeeds";
}

/** An off-session charge of a saved card: `confirm=true`, `off_session=true`. */
export type NewOffSessionPayment = {
  amount: number;
  currency: string;
  customer: string;
  paymentMethod: string;
  metadata: Metadata;
  description: string | null;
  receiptEmail: string | null;
  statementDescriptorSuffix: string | null;
  paymentMethodTypes: string[];
};

export type StoreOptions = {
  apiVersion: string;
  /** Base URL of pages (pay, portal, receipts) as a browser reaches them. */
  publicUrl: () => string;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Called with each new event, after it was recorded. */
  onEvent: (event: StripeEvent) => void;
};

const SESSION_LIFETIME_S = 24 * 60 * 60;
const STATEMENT_DESCRIPTOR = "PARLEY";

/** What the delayed method of the pay page (a US bank debit) looks like on its charge. */
const BANK_DEBIT: PaymentMethodDetails = {
  type: "us_bank_account",
  us_bank_account: {
    account_holder_type: "individual",
    account_type: "checking",
    bank_name: "STRIPE TEST BANK",
    last4: "6789",
    routing_number: "110000000",
  },
};
const PORTAL_CONFIGURATION = "bpc_test_standin";

/** The Checkout Session with what Stripe keeps beside it. */
type SessionRecord = {
  session: CheckoutSession;
  lineItems: LineItem[];
  /** `customer_creation: always`: a customer is created when the session completes. */
  createCustomer: boolean;
  intentData: NewCheckoutSession["paymentIntentData"];
  setupIntentData: NewCheckoutSession["setupIntentData"];
};

/** A saved card with the test-card behaviour Stripe would give its number (never the number). */
type PaymentMethodRecord = { paymentMethod: PaymentMethod; behaviour: CardBehaviour };

export class StandinStore {
  readonly #options: StoreOptions;
  readonly #customers = new Map<string, Customer>();
  /** Ids of deleted customers, all that is left of them (Stripe answers a stub for them). */
  readonly #deletedCustomers = new Set<string>();
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #paymentIntents = new Map<string, PaymentIntent>();
  readonly #charges = new Map<string, Charge>();
  readonly #paymentMethods = new Map<string, PaymentMethodRecord>();
  readonly #setupIntents = new Map<string, SetupIntent>();
  readonly #refunds = new Map<string, Refund>();
  readonly #disputes = new DisputeDesk({
    charge: (id) => this.#charges.get(id),
    nowSeconds: () => this.nowSeconds(),
    emit: (type, dispute, previous) => this.#emit(type, dispute, CUSTOMER_ACTION, previous),
  });
  readonly #portalSessions = new Map<string, BillingPortalSession>();
  readonly #events: StripeEvent[] = [];
  readonly #eventsById = new Map<string, StripeEvent>();

  constructor(options: StoreOptions) {
    this.#options = options;
  }

  reset(): void {
    for (const map of [
      this.#customers,
      this.#sessions,
      this.#paymentIntents,
      this.#charges,
      this.#paymentMethods,
      this.#setupIntents,
      this.#refunds,
      this.#portalSessions,
      this.#eventsById,
    ]) {
      map.clear();
    }
    this.#deletedCustomers.clear();
    this.#disputes.reset();
    this.#events.length = 0;
  }

  /** The stand-in's clock, in unix seconds. */
  nowSeconds(): number {
    return Math.floor(this.#options.now() / 1000);
  }

  #emit(
    type: StripeEventType,
    object: StripeObject,
    request: RequestInfo,
    previousAttributes?: Record<string, unknown>,
  ): void {
    const event: StripeEvent = {
      id: newId("evt"),
      object: "event",
      api_version: this.#options.apiVersion,
      created: this.nowSeconds(),
      // A snapshot: later changes to the object must not rewrite history.
      data: {
        object: structuredClone(object),
        ...(previousAttributes === undefined ? {} : { previous_attributes: previousAttributes }),
      },
      livemode: false,
      pending_webhooks: 0,
      request: { id: request.id, idempotency_key: request.idempotencyKey },
      type,
    };
    this.#events.push(event);
    this.#eventsById.set(event.id, event);
    this.#options.onEvent(event);
  }

  // --- Customers ---

  createCustomer(input: NewCustomer, request: RequestInfo): Customer {
    const customer: Customer = {
      id: newId("cus", 14),
      object: "customer",
      address: null,
      balance: 0,
      created: this.nowSeconds(),
      currency: null,
      default_source: null,
      delinquent: false,
      description: input.description,
      email: input.email,
      invoice_prefix: newId("x", 8).slice(-8).toUpperCase(),
      livemode: false,
      metadata: input.metadata,
      name: input.name,
      phone: input.phone,
      preferred_locales: [],
      shipping: null,
      tax_exempt: "none",
      test_clock: null,
    };
    this.#customers.set(customer.id, customer);
    this.#emit("customer.created", customer, request);
    return customer;
  }

  /** A customer that exists; undefined once it is deleted. */
  customer(id: string): Customer | undefined {
    return this.#customers.get(id);
  }

  /** The stub Stripe answers for a deleted customer; undefined for any other id. */
  deletedCustomer(id: string): DeletedCustomer | undefined {
    return this.#deletedCustomers.has(id) ? { id, object: "customer", deleted: true } : undefined;
  }

  /**
   * Sets the changed fields and emits `customer.updated` with their earlier values in
   * `previous_attributes` (metadata: only the keys that changed, null for a new key). An update
   * that changes nothing emits nothing.
   */
  updateCustomer(id: string, changes: CustomerChanges, request: RequestInfo): Customer {
    const customer = this.#customers.get(id);
    if (customer === undefined) throw noSuch("customer", id, { param: "id" });
    const previous: Record<string, unknown> = {};
    for (const field of CUSTOMER_TEXT_FIELDS) {
      const next = changes[field];
      if (next === undefined || next === customer[field]) continue;
      previous[field] = customer[field];
      customer[field] = next;
    }
    if (changes.metadata !== undefined) {
      const changed = metadataChanges(customer.metadata, changes.metadata);
      if (changed !== null) {
        previous.metadata = changed;
        customer.metadata = { ...changes.metadata };
      }
    }
    if (Object.keys(previous).length > 0) {
      this.#emit("customer.updated", customer, request, previous);
    }
    return customer;
  }

  /**
   * Forgets the customer but its id, and emits `customer.deleted`, whose object is the customer
   * as it was (as on Stripe). Payment records that name it stay (README, "After a customer
   * delete"). A second delete is a 404, as on Stripe.
   */
  deleteCustomer(id: string, request: RequestInfo): DeletedCustomer {
    const customer = this.#customers.get(id);
    if (customer === undefined) throw noSuch("customer", id, { param: "id" });
    this.#customers.delete(id);
    this.#deletedCustomers.add(id);
    this.#emit("customer.deleted", customer, request);
    return { id, object: "customer", deleted: true };
  }

  customers(): Customer[] {
    return [...this.#customers.values()];
  }

  // --- Checkout Sessions ---

  createCheckoutSession(input: NewCheckoutSession): CheckoutSession {
    const created = this.nowSeconds();
    const id = newId("cs", 58);
    const setup = input.mode === "setup";
    const currency = setup ? input.currency : (input.lineItems[0]?.currency ?? "usd");
    const lineItems = input.lineItems.map((item): LineItem => {
      const total = item.unitAmount * item.quantity;
      return {
        id: newId("li"),
        object: "item",
        amount_discount: 0,
        amount_subtotal: total,
        amount_tax: 0,
        amount_total: total,
        currency: item.currency,
        description: item.name,
        price: {
          id: newId("price"),
          object: "price",
          active: false,
          billing_scheme: "per_unit",
          created,
          currency: item.currency,
          livemode: false,
          lookup_key: null,
          metadata: {},
          nickname: null,
          product: newId("prod", 14),
          recurring: null,
          tax_behavior: "unspecified",
          type: "one_time",
          unit_amount: item.unitAmount,
          unit_amount_decimal: String(item.unitAmount),
        },
        quantity: item.quantity,
      };
    });
    const amount = lineItems.reduce((sum, item) => sum + item.amount_total, 0);
    const session: CheckoutSession = {
      id,
      object: "checkout.session",
      after_expiration: null,
      allow_promotion_codes: null,
      amount_subtotal: setup ? null : amount,
      amount_total: setup ? null : amount,
      automatic_tax: { enabled: false, liability: null, status: null },
      billing_address_collection: null,
      cancel_url: input.cancelUrl,
      client_reference_id: input.clientReferenceId,
      client_secret: null,
      created,
      currency,
      customer: input.customer,
      customer_creation:
        input.customer === null && !setup ? (input.customerCreation ?? "if_required") : null,
      customer_details: null,
      customer_email: input.customerEmail,
      expires_at: input.expiresAt ?? created + SESSION_LIFETIME_S,
      invoice: null,
      livemode: false,
      locale: input.locale,
      metadata: input.metadata,
      mode: input.mode,
      payment_intent: null,
      payment_link: null,
      payment_method_collection: "if_required",
      payment_method_types: input.paymentMethodTypes,
      payment_status: setup ? "no_payment_required" : "unpaid",
      setup_intent: null,
      shipping_address_collection: null,
      status: "open",
      submit_type: input.submitType,
      subscription: null,
      success_url: input.successUrl,
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
      ui_mode: "hosted",
      url: `${this.#options.publicUrl()}/pay/${id}`,
    };
    this.#sessions.set(id, {
      session,
      lineItems,
      createCustomer: input.customer === null && input.customerCreation === "always",
      intentData: input.paymentIntentData,
      setupIntentData: input.setupIntentData,
    });
    return session;
  }

  /** The session, expired first if its `expires_at` has passed (Stripe expires it then too). */
  checkoutSession(id: string): CheckoutSession | undefined {
    const record = this.#sessions.get(id);
    if (record === undefined) return undefined;
    const { session } = record;
    if (session.status === "open" && this.nowSeconds() >= session.expires_at) {
      this.#expire(record, CUSTOMER_ACTION);
    }
    return session;
  }

  checkoutSessions(): CheckoutSession[] {
    return [...this.#sessions.keys()].flatMap((id) => this.checkoutSession(id) ?? []);
  }

  lineItems(sessionId: string): LineItem[] | undefined {
    return this.#sessions.get(sessionId)?.lineItems;
  }

  expireCheckoutSession(id: string, request: RequestInfo): CheckoutSession {
    const session = this.checkoutSession(id);
    const record = this.#sessions.get(id);
    if (session === undefined || record === undefined) {
      throw noSuch("checkout.session", id, { param: "session" });
    }
    if (session.status !== "open") {
      throw invalidRequest(
        `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`,
        { param: "session" },
      );
    }
    this.#expire(record, request);
    return session;
  }

  #expire(record: SessionRecord, request: RequestInfo): void {
    const { session } = record;
    session.status = "expired";
    session.url = null;
    const intent = this.#intentOf(session);
    if (intent !== undefined && intent.status === "requires_payment_method") {
      intent.status = "canceled";
      intent.canceled_at = this.nowSeconds();
      intent.cancellation_reason = "abandoned";
    }
    this.#emit("checkout.session.expired", session, request);
  }

  #intentOf(session: CheckoutSession): PaymentIntent | undefined {
    return session.payment_intent === null
      ? undefined
      : this.#paymentIntents.get(session.payment_intent);
  }

  /** The session, open; a complete or expired one is refused, so nothing is paid twice. */
  #openSession(sessionId: string): SessionRecord {
    const session = this.checkoutSession(sessionId);
    const record = this.#sessions.get(sessionId);
    if (session === undefined || record === undefined) {
      throw noSuch("checkout.session", sessionId, { param: "session" });
    }
    if (session.status !== "open") {
      throw new StripeApiError(
        409,
        "invalid_request_error",
        `This Checkout Session is ${session.status === "complete" ? "already complete" : "expired"}; it cannot be paid.`,
        { code: "checkout_session_not_open", param: "session" },
      );
    }
    return record;
  }

  /** The customer's submit on the pay page, whatever the session's mode. */
  complete(sessionId: string, options: PayOptions = {}): PayResult | SetupResult {
    const { session } = this.#openSession(sessionId);
    return session.mode === "setup"
      ? this.saveCard(sessionId, options)
      : this.pay(sessionId, options);
  }

  /**
   * The customer paying on the pay page (or a test through the control API). Refuses a session
   * that is not open, so a double submit never pays twice.
   */
  pay(sessionId: string, options: PayOptions = {}): PayResult {
    const record = this.#openSession(sessionId);
    const { session } = record;
    if (session.mode !== "payment") {
      throw invalidRequest(
        `This Checkout Session is in ${session.mode} mode: nothing is paid, a card is saved (saveCard).`,
        { param: "session" },
      );
    }
    const customer = session.customer === null ? undefined : this.#customers.get(session.customer);
    const email =
      options.email ?? session.customer_email ?? customer?.email ?? "customer@example.com";
    const async = options.async === true;
    const fail = options.fail === true;
    // Checked before anything is created: a mistyped number changes nothing.
    const number = options.card === undefined ? null : testCardNumber(options.card);
    const behaviour = number === null ? "succeeds" : cardBehaviour(number);
    // On the pay page the customer would complete 3-D Secure, so the card needing it succeeds.
    const failure: CardFailure | null = fail
      ? CARD_FAILURES.declined
      : behaviour === "declined" || behaviour === "insufficient_funds"
        ? CARD_FAILURES[behaviour]
        : null;

    let intent = this.#intentOf(session);
    if (intent === undefined) {
      intent = this.#createIntent(session, record.intentData);
      session.payment_intent = intent.id;
      this.#emit("payment_intent.created", intent, CUSTOMER_ACTION);
    }
    const charge = this.#createCharge(intent, {
      customer: session.customer,
      email,
      paymentMethod: newId("pm"),
      details: async ? BANK_DEBIT : { type: "card", card: this.#card(number ?? DEFAULT_TEST_CARD) },
      async,
    });
    intent.latest_charge = charge.id;
    intent.payment_method = charge.payment_method;

    if (!async && failure !== null) {
      decline(charge, intent, failure.code, failure.message, failure.declineCode);
      this.#emit("charge.failed", charge, CUSTOMER_ACTION);
      this.#emit("payment_intent.payment_failed", intent, CUSTOMER_ACTION);
      return { outcome: "declined", ...snapshot(session, intent, charge) };
    }

    session.status = "complete";
    session.url = null;
    session.customer_details = {
      address: null,
      email,
      name: customer?.name ?? null,
      phone: null,
      tax_exempt: "none",
      tax_ids: [],
    };
    if (record.createCustomer) {
      const created = this.createCustomer(
        { email, name: null, description: null, phone: null, metadata: {} },
        CUSTOMER_ACTION,
      );
      session.customer = created.id;
      intent.customer = created.id;
      charge.customer = created.id;
    }

    if (!async) {
      succeed(charge, intent);
      session.payment_status = "paid";
      this.#emit("charge.succeeded", charge, CUSTOMER_ACTION);
      this.#emit("payment_intent.succeeded", intent, CUSTOMER_ACTION);
      this.#emit("checkout.session.completed", session, CUSTOMER_ACTION);
      return { outcome: "paid", ...snapshot(session, intent, charge) };
    }

    // A delayed method: the customer is done, the money is not. Stripe completes the session
    // unpaid, then reports the settlement with a second checkout event.
    intent.status = "processing";
    this.#emit("charge.pending", charge, CUSTOMER_ACTION);
    this.#emit("payment_intent.processing", intent, CUSTOMER_ACTION);
    this.#emit("checkout.session.completed", session, CUSTOMER_ACTION);
    if (fail) {
      decline(
        charge,
        intent,
        "insufficient_funds",
        "The account has insufficient funds to cover this payment.",
      );
      this.#emit("charge.failed", charge, CUSTOMER_ACTION);
      this.#emit("payment_intent.payment_failed", intent, CUSTOMER_ACTION);
      this.#emit("checkout.session.async_payment_failed", session, CUSTOMER_ACTION);
      return { outcome: "async_failed", ...snapshot(session, intent, charge) };
    }
    succeed(charge, intent);
    session.payment_status = "paid";
    this.#emit("charge.succeeded", charge, CUSTOMER_ACTION);
    this.#emit("payment_intent.succeeded", intent, CUSTOMER_ACTION);
    this.#emit("checkout.session.async_payment_succeeded", session, CUSTOMER_ACTION);
    return { outcome: "async_succeeded", ...snapshot(session, intent, charge) };
  }

  /**
   * The customer saving a card on a setup-mode session's pay page (or a test through the control
   * API): a PaymentMethod attached to the session's customer and the SetupIntent that saved it.
   * A session without a customer saves the card unattached (it cannot be charged later).
   */
  saveCard(sessionId: string, options: PayOptions = {}): SetupResult {
    const record = this.#openSession(sessionId);
    const { session } = record;
    if (session.mode !== "setup") {
      throw invalidRequest(
        `This Checkout Session is in ${session.mode} mode: it is paid, not used to save a card.`,
        { param: "session" },
      );
    }
    // Checked before anything is created: a mistyped number changes nothing.
    const number = testCardNumber(options.card);
    const customer = session.customer === null ? undefined : this.#customers.get(session.customer);
    const email =
      options.email ?? session.customer_email ?? customer?.email ?? "customer@example.com";
    const created = this.nowSeconds();

    const paymentMethod: PaymentMethod = {
      id: newId("pm"),
      object: "payment_method",
      billing_details: { address: null, email, name: customer?.name ?? null, phone: null },
      card: this.#card(number),
      created,
      customer: session.customer,
      livemode: false,
      metadata: {},
      type: "card",
    };
    this.#paymentMethods.set(paymentMethod.id, {
      paymentMethod,
      behaviour: cardBehaviour(number),
    });
    if (paymentMethod.customer !== null) {
      this.#emit("payment_method.attached", paymentMethod, CUSTOMER_ACTION);
    }

    const id = newId("seti");
    const setupIntent: SetupIntent = {
      id,
      object: "setup_intent",
      application: null,
      cancellation_reason: null,
      client_secret: `${id}_secret_${newId("s").slice(-20)}`,
      created,
      customer: session.customer,
      description: record.setupIntentData.description,
      last_setup_error: null,
      latest_attempt: null,
      livemode: false,
      metadata: { ...record.setupIntentData.metadata },
      next_action: null,
      payment_method: null,
      payment_method_types: [...session.payment_method_types],
      status: "requires_payment_method",
      usage: "off_session",
    };
    this.#setupIntents.set(id, setupIntent);
    // Stripe creates the SetupIntent with the session; its created event shows it still waiting.
    this.#emit("setup_intent.created", setupIntent, CUSTOMER_ACTION);
    setupIntent.status = "succeeded";
    setupIntent.payment_method = paymentMethod.id;
    this.#emit("setup_intent.succeeded", setupIntent, CUSTOMER_ACTION);

    session.status = "complete";
    session.url = null;
    session.setup_intent = id;
    session.customer_details = {
      address: null,
      email,
      name: customer?.name ?? null,
      phone: null,
      tax_exempt: "none",
      tax_ids: [],
    };
    this.#emit("checkout.session.completed", session, CUSTOMER_ACTION);
    return {
      outcome: "setup_succeeded",
      session: structuredClone(session),
      setupIntent: structuredClone(setupIntent),
      paymentMethod: structuredClone(paymentMethod),
    };
  }

  /**
   * `POST /v1/payment_intents` with `confirm=true&off_session=true`: charges a saved card now,
   * the customer absent. The saved card's test behaviour decides. A failed attempt leaves its
   * PaymentIntent (and charge) behind and answers Stripe's 402 card error, which carries them;
   * that error counts as executed, so its Idempotency-Key replays it.
   */
  chargeOffSession(input: NewOffSessionPayment, request: RequestInfo): PaymentIntent {
    if (!this.#customers.has(input.customer)) {
      throw noSuch("customer", input.customer, { param: "customer", status: 400 });
    }
    const record = this.#paymentMethods.get(input.paymentMethod);
    if (record === undefined) {
      throw noSuch("PaymentMethod", input.paymentMethod, {
        param: "payment_method",
        status: 400,
      });
    }
    const { paymentMethod } = record;
    if (paymentMethod.customer === null) {
      throw invalidRequest(
        "The provided PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.",
        { param: "payment_method" },
      );
    }
    if (paymentMethod.customer !== input.customer) {
      throw invalidRequest(
        `The provided PaymentMethod (${paymentMethod.id}) is attached to another Customer than the one provided (${input.customer}).`,
        { param: "payment_method" },
      );
    }

    const intent = this.#newIntent({
      amount: input.amount,
      currency: input.currency,
      customer: input.customer,
      description: input.description,
      metadata: input.metadata,
      paymentMethodTypes: input.paymentMethodTypes,
      receiptEmail: input.receiptEmail,
      statementDescriptorSuffix: input.statementDescriptorSuffix,
    });
    this.#emit("payment_intent.created", intent, request);

    const { behaviour } = record;
    if (behaviour === "authentication_required") {
      // The bank wants the customer, who is not there: no charge is attempted.
      const failure = CARD_FAILURES.authentication_required;
      intent.last_payment_error = {
        type: "card_error",
        code: failure.code,
        decline_code: failure.declineCode,
        doc_url: `https://stripe.com/docs/error-codes/${failure.code}`,
        message: failure.message,
        payment_method: structuredClone(paymentMethod),
      };
      this.#emit("payment_intent.payment_failed", intent, request);
      throw offSessionError(failure, intent, paymentMethod, undefined);
    }

    const charge = this.#createCharge(intent, {
      customer: input.customer,
      email: paymentMethod.billing_details.email,
      paymentMethod: paymentMethod.id,
      details: { type: "card", card: { ...paymentMethod.card } },
      async: false,
    });
    charge.billing_details = { ...paymentMethod.billing_details };
    intent.latest_charge = charge.id;
    if (behaviour === "succeeds") {
      intent.payment_method = paymentMethod.id;
      succeed(charge, intent);
      this.#emit("charge.succeeded", charge, request);
      this.#emit("payment_intent.succeeded", intent, request);
      return intent;
    }
    const failure = CARD_FAILURES[behaviour];
    decline(charge, intent, failure.code, failure.message, failure.declineCode);
    // As on Stripe: a failed PaymentIntent names no payment method; its last error carries it.
    if (intent.last_payment_error !== null) {
      intent.last_payment_error.doc_url = `https://stripe.com/docs/error-codes/${failure.code}`;
      intent.last_payment_error.payment_method = structuredClone(paymentMethod);
    }
    this.#emit("charge.failed", charge, request);
    this.#emit("payment_intent.payment_failed", intent, request);
    throw offSessionError(failure, intent, paymentMethod, charge.id);
  }

  #createIntent(
    session: CheckoutSession,
    data: NewCheckoutSession["paymentIntentData"],
  ): PaymentIntent {
    return this.#newIntent({
      amount: session.amount_total ?? 0,
      currency: session.currency ?? "usd",
      customer: session.customer,
      description: data.description,
      metadata: data.metadata,
      paymentMethodTypes: session.payment_method_types,
      receiptEmail: data.receiptEmail,
      statementDescriptorSuffix: null,
    });
  }

  #newIntent(input: {
    amount: number;
    currency: string;
    customer: string | null;
    description: string | null;
    metadata: Metadata;
    paymentMethodTypes: string[];
    receiptEmail: string | null;
    statementDescriptorSuffix: string | null;
  }): PaymentIntent {
    const id = newId("pi");
    const intent: PaymentIntent = {
      id,
      object: "payment_intent",
      amount: input.amount,
      amount_capturable: 0,
      amount_received: 0,
      application: null,
      application_fee_amount: null,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: "automatic_async",
      client_secret: `${id}_secret_${newId("s").slice(-20)}`,
      confirmation_method: "automatic",
      created: this.nowSeconds(),
      currency: input.currency,
      customer: input.customer,
      description: input.description,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: { ...input.metadata },
      next_action: null,
      payment_method: null,
      payment_method_types: [...input.paymentMethodTypes],
      receipt_email: input.receiptEmail,
      statement_descriptor_suffix: input.statementDescriptorSuffix,
      status: "requires_payment_method",
    };
    this.#paymentIntents.set(id, intent);
    return intent;
  }

  /** A test card as Stripe describes it: always a US Visa credit card expiring in 3 years. */
  #card(number: string): CardDetails {
    return {
      brand: "visa",
      country: "US",
      exp_month: 12,
      exp_year: new Date(this.#options.now()).getUTCFullYear() + 3,
      funding: "credit",
      last4: number.slice(-4),
    };
  }

  /** A pending charge of `intent`; `async` (a bank debit) is captured at once, as on Stripe. */
  #createCharge(
    intent: PaymentIntent,
    payment: {
      customer: string | null;
      email: string | null;
      paymentMethod: string;
      details: PaymentMethodDetails;
      async: boolean;
    },
  ): Charge {
    const id = newId("ch");
    const { async, email } = payment;
    const charge: Charge = {
      id,
      object: "charge",
      amount: intent.amount,
      amount_captured: async ? intent.amount : 0,
      amount_refunded: 0,
      balance_transaction: null,
      billing_details: { address: null, email, name: null, phone: null },
      calculated_statement_descriptor:
        intent.statement_descriptor_suffix === null
          ? STATEMENT_DESCRIPTOR
          : `${STATEMENT_DESCRIPTOR}* ${intent.statement_descriptor_suffix}`.slice(0, 22),
      captured: async,
      created: this.nowSeconds(),
      currency: intent.currency,
      customer: payment.customer,
      description: intent.description,
      disputed: false,
      failure_code: null,
      failure_message: null,
      livemode: false,
      metadata: { ...intent.metadata },
      outcome: null,
      paid: false,
      payment_intent: intent.id,
      payment_method: payment.paymentMethod,
      payment_method_details: payment.details,
      receipt_email: intent.receipt_email,
      receipt_number: null,
      receipt_url: `${this.#options.publicUrl()}/receipts/${id}`,
      refunded: false,
      status: "pending",
    };
    this.#charges.set(id, charge);
    return charge;
  }

  // --- PaymentMethods and SetupIntents ---

  paymentMethod(id: string): PaymentMethod | undefined {
    return this.#paymentMethods.get(id)?.paymentMethod;
  }

  paymentMethods(): PaymentMethod[] {
    return [...this.#paymentMethods.values()].map((record) => record.paymentMethod);
  }

  setupIntent(id: string): SetupIntent | undefined {
    return this.#setupIntents.get(id);
  }

  setupIntents(): SetupIntent[] {
    return [...this.#setupIntents.values()];
  }

  /**
   * Detaches a saved card from its customer (`payment_method.detached`, with the customer in
   * `previous_attributes`). As on Stripe, a detached card can never be charged or attached again.
   */
  detachPaymentMethod(id: string, request: RequestInfo): PaymentMethod {
    const paymentMethod = this.#paymentMethods.get(id)?.paymentMethod;
    if (paymentMethod === undefined) {
      throw noSuch("PaymentMethod", id, { param: "payment_method" });
    }
    if (paymentMethod.customer === null) {
      throw invalidRequest(
        "The payment method you provided is not attached to a customer so detachment is impossible.",
      );
    }
    const previous = { customer: paymentMethod.customer };
    paymentMethod.customer = null;
    this.#emit("payment_method.detached", paymentMethod, request, previous);
    return paymentMethod;
  }

  // --- PaymentIntents, Charges, Refunds, Disputes ---

  paymentIntent(id: string): PaymentIntent | undefined {
    return this.#paymentIntents.get(id);
  }

  paymentIntents(): PaymentIntent[] {
    return [...this.#paymentIntents.values()];
  }

  charge(id: string): Charge | undefined {
    return this.#charges.get(id);
  }

  charges(): Charge[] {
    return [...this.#charges.values()];
  }

  refund(id: string): Refund | undefined {
    return this.#refunds.get(id);
  }

  refunds(): Refund[] {
    return [...this.#refunds.values()];
  }

  createRefund(input: NewRefund, request: RequestInfo): Refund {
    const charge = this.#refundableCharge(input);
    if (charge.disputed) {
      // The cardholder's bank already took the money back: Stripe refuses to refund it twice.
      throw invalidRequest(`Charge ${charge.id} has been charged back; it cannot be refunded.`, {
        code: "charge_disputed",
      });
    }
    const remaining = charge.amount - charge.amount_refunded;
    if (remaining <= 0) {
      throw invalidRequest(`Charge ${charge.id} has already been refunded.`, {
        code: "charge_already_refunded",
      });
    }
    const amount = input.amount ?? remaining;
    if (amount > remaining) {
      throw invalidRequest(
        `Refund amount (${formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(remaining, charge.currency)})`,
        { code: "amount_too_large", param: "amount" },
      );
    }
    const refund: Refund = {
      id: newId("re"),
      object: "refund",
      amount,
      balance_transaction: null,
      charge: charge.id,
      created: this.nowSeconds(),
      currency: charge.currency,
      metadata: input.metadata,
      payment_intent: charge.payment_intent,
      reason: input.reason,
      receipt_number: null,
      status: "succeeded",
    };
    this.#refunds.set(refund.id, refund);
    const previous: Record<string, unknown> = { amount_refunded: charge.amount_refunded };
    charge.amount_refunded += amount;
    if (charge.amount_refunded === charge.amount) {
      charge.refunded = true;
      previous.refunded = false;
    }
    this.#emit("charge.refunded", charge, request, previous);
    this.#emit("refund.created", refund, request);
    return refund;
  }

  #refundableCharge(input: NewRefund): Charge {
    let charge: Charge | undefined;
    if (input.charge !== null) {
      charge = this.#charges.get(input.charge);
      if (charge === undefined)
        throw noSuch("charge", input.charge, { param: "charge", status: 400 });
      if (input.paymentIntent !== null && charge.payment_intent !== input.paymentIntent) {
        throw invalidRequest(
          `Charge ${charge.id} does not belong to PaymentIntent ${input.paymentIntent}.`,
          { param: "payment_intent" },
        );
      }
    } else if (input.paymentIntent !== null) {
      const intent = this.#paymentIntents.get(input.paymentIntent);
      if (intent === undefined) {
        throw noSuch("payment_intent", input.paymentIntent, {
          param: "payment_intent",
          status: 400,
        });
      }
      charge = intent.latest_charge === null ? undefined : this.#charges.get(intent.latest_charge);
      if (charge === undefined || intent.status !== "succeeded") {
        throw invalidRequest(
          `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
          { param: "payment_intent" },
        );
      }
    } else {
      throw invalidRequest(
        "One of the following params should be provided for this request: payment_intent or charge.",
        { code: "parameter_missing" },
      );
    }
    if (charge.status !== "succeeded") {
      throw invalidRequest(
        `Charge ${charge.id} has a status of ${charge.status} and cannot be refunded.`,
        { param: "charge" },
      );
    }
    return charge;
  }

  /** Disputes and their lifecycle (disputes.ts): opened, answered and closed by test controls. */
  get disputeDesk(): DisputeDesk {
    return this.#disputes;
  }

  dispute(id: string): Dispute | undefined {
    return this.#disputes.get(id);
  }

  disputes(): Dispute[] {
    return this.#disputes.list();
  }

  // --- Billing portal ---

  createPortalSession(
    input: { customer: string; returnUrl: string | null; locale: string | null },
    _request: RequestInfo,
  ): BillingPortalSession {
    if (!this.#customers.has(input.customer)) {
      throw noSuch("customer", input.customer, { param: "customer", status: 400 });
    }
    const id = newId("bps");
    const portal: BillingPortalSession = {
      id,
      object: "billing_portal.session",
      configuration: PORTAL_CONFIGURATION,
      created: this.nowSeconds(),
      customer: input.customer,
      flow: null,
      livemode: false,
      locale: input.locale,
      on_behalf_of: null,
      return_url: input.returnUrl,
      url: `${this.#options.publicUrl()}/portal/${id}`,
    };
    this.#portalSessions.set(id, portal);
    return portal;
  }

  portalSession(id: string): BillingPortalSession | undefined {
    return this.#portalSessions.get(id);
  }

  // --- Events ---

  event(id: string): StripeEvent | undefined {
    return this.#eventsById.get(id);
  }

  /** Oldest first. */
  events(): readonly StripeEvent[] {
    return this.#events;
  }

  /** Any stored object by id, for `expand[]`. */
  resolve(id: string): StripeObject | undefined {
    const prefix = id.slice(0, id.indexOf("_"));
    switch (prefix) {
      case "cus":
        return this.#customers.get(id) ?? this.deletedCustomer(id);
      case "cs":
        return this.checkoutSession(id);
      case "pi":
        return this.#paymentIntents.get(id);
      case "ch":
        return this.#charges.get(id);
      case "pm":
        return this.#paymentMethods.get(id)?.paymentMethod;
      case "seti":
        return this.#setupIntents.get(id);
      case "re":
        return this.#refunds.get(id);
      case "dp":
        return this.#disputes.get(id);
      case "bps":
        return this.#portalSessions.get(id);
      default:
        return undefined;
    }
  }

  /** The refunds of a charge as Stripe lists them under `charge.refunds` (newest first). */
  refundList(chargeId: string): StripeList<Refund> {
    return {
      object: "list",
      data: this.refunds()
        .filter((r) => r.charge === chargeId)
        .reverse(),
      has_more: false,
      url: `/v1/charges/${chargeId}/refunds`,
    };
  }
}

/** The keys whose value differs, with the value before (null where there was none). */
function metadataChanges(before: Metadata, after: Metadata): Record<string, string | null> | null {
  const changed: Record<string, string | null> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (before[key] !== after[key]) changed[key] = before[key] ?? null;
  }
  return Object.keys(changed).length === 0 ? null : changed;
}

function succeed(charge: Charge, intent: PaymentIntent): void {
  charge.status = "succeeded";
  charge.paid = true;
  charge.captured = true;
  charge.amount_captured = charge.amount;
  charge.outcome = {
    network_status: "approved_by_network",
    reason: null,
    risk_level: "normal",
    seller_message: "Payment complete.",
    type: "authorized",
  };
  intent.status = "succeeded";
  intent.amount_received = intent.amount;
  intent.last_payment_error = null;
}

function decline(
  charge: Charge,
  intent: PaymentIntent,
  code: string,
  message: string,
  declineCode?: string,
): void {
  charge.status = "failed";
  charge.paid = false;
  charge.captured = false;
  charge.amount_captured = 0;
  charge.failure_code = code;
  charge.failure_message = message;
  charge.outcome = {
    network_status: "declined_by_network",
    reason: declineCode ?? code,
    risk_level: "normal",
    seller_message: "The bank did not return any further details with this decline.",
    type: "issuer_declined",
  };
  intent.status = "requires_payment_method";
  intent.last_payment_error = {
    type: "card_error",
    code,
    ...(declineCode === undefined ? {} : { decline_code: declineCode }),
    message,
    charge: charge.id,
  };
}

/** The 402 Stripe answers a failed off-session attempt with; the client throws StripeCardError. */
function offSessionError(
  failure: CardFailure,
  intent: PaymentIntent,
  paymentMethod: PaymentMethod,
  charge: string | undefined,
): StripeApiError {
  return new StripeApiError(402, "card_error", failure.message, {
    code: failure.code,
    declineCode: failure.declineCode,
    extra: {
      ...(charge === undefined ? {} : { charge }),
      payment_intent: structuredClone(intent),
      payment_method: structuredClone(paymentMethod),
    },
    executed: true,
  });
}

function snapshot(session: CheckoutSession, intent: PaymentIntent, charge: Charge) {
  return {
    session: structuredClone(session),
    paymentIntent: structuredClone(intent),
    charge: structuredClone(charge),
  };
}

/** Digits after the decimal point, from ISO 4217 as Intl knows it (JPY 0, KWD 3, USD 2). */
export function currencyDigits(currency: string): number {
  try {
    return (
      new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions()
        .maximumFractionDigits ?? 2
    );
  } catch {
    return 2;
  }
}

/** An amount in the currency's smallest unit, for people: `formatAmount(1050, "usd")` is "$10.50". */
export function formatAmount(amount: number, currency: string): string {
  const digits = currencyDigits(currency);
  try {
    return new Intl.NumberFormat("en-US", {
      style: "currency",
      currency: currency.toUpperCase(),
    }).format(amount / 10 ** digits);
  } catch {
    return `${(amount / 10 ** digits).toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

/**
 * Saving a card in a setup-mode Checkout Session and charging it later off-session, through the
 * real `stripe@23.1.0` client: the session, the pay page and the control route, the saved
 * PaymentMethod and SetupIntent, Stripe's test cards, 402 card errors with the PaymentIntent in
 * them, idempotent replays of a decline, detaching.
 */
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { rejection, standinPerFile } from "./helpers.ts";

const stand = standinPerFile("whsec_setup_test");

const DECLINED = "4000000000000341";
const INSUFFICIENT_FUNDS = "4000000000009995";
const NEEDS_AUTHENTICATION = "4000002760003184";

/** What the platform sends to save a card. */
function setupParams(
  customer: string,
  overrides: Partial<Stripe.Checkout.SessionCreateParams> = {},
): Stripe.Checkout.SessionCreateParams {
  return {
    mode: "setup",
    customer,
    currency: "usd",
    success_url: "http://127.0.0.1:8787/billing?saved={CHECKOUT_SESSION_ID}",
    cancel_url: "http://127.0.0.1:8787/billing?cancelled=1",
    metadata: { org_id: "org_123", purpose: "auto_top_up" },
    setup_intent_data: { metadata: { org_id: "org_123" }, description: "Auto top-up card" },
    ...overrides,
  };
}

/** What `POST /__standin/checkout/sessions/:id/pay` answers. */
type ControlAnswer = {
  outcome?: string;
  session?: Stripe.Checkout.Session;
  setup_intent?: Stripe.SetupIntent;
  payment_method?: Stripe.PaymentMethod;
  payment_intent?: Stripe.PaymentIntent;
  charge?: Stripe.Charge;
  error?: { type: string; code?: string; param?: string; message: string };
};

async function controlPay(
  sessionId: string,
  body: Record<string, unknown> = {},
): Promise<{ status: number; body: ControlAnswer }> {
  const response = await fetch(
    `${stand.standin.url}/__standin/checkout/sessions/${sessionId}/pay`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    },
  );
  return { status: response.status, body: (await response.json()) as ControlAnswer };
}

function form(fields: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  };
}

function eventTypes(): string[] {
  return stand.standin.events().map((e) => e.type);
}

/** A customer with a card saved through a setup session; events so far are forgotten by index. */
async function savedCard(card?: string): Promise<{ customer: string; paymentMethod: string }> {
  const customer = await stand.stripe.customers.create({ email: "owner@example.com" });
  const session = await stand.stripe.checkout.sessions.create(setupParams(customer.id));
  const paid = await controlPay(session.id, card === undefined ? {} : { card });
  expect(paid.status).toBe(200);
  return { customer: customer.id, paymentMethod: String(paid.body.payment_method?.id) };
}

function offSession(
  customer: string,
  paymentMethod: string,
  overrides: Partial<Stripe.PaymentIntentCreateParams> = {},
): Stripe.PaymentIntentCreateParams {
  return {
    amount: 2000,
    currency: "usd",
    customer,
    payment_method: paymentMethod,
    off_session: true,
    confirm: true,
    metadata: { org_id: "org_123", kind: "auto_top_up" },
    description: "Parley auto top-up",
    ...overrides,
  };
}

describe("setup-mode Checkout Sessions", () => {
  it("creates an open session that charges nothing, whose url is the pay page", async () => {
    const customer = await stand.stripe.customers.create({ email: "owner@example.com" });
    // stripe@23's types have dropped `payment_method_types`; the platform may still send it.
    const session = await stand.stripe.checkout.sessions.create({
      ...setupParams(customer.id),
      ...({ payment_method_types: ["card"] } as object),
    });
    expect(session).toMatchObject({
      object: "checkout.session",
      mode: "setup",
      status: "open",
      payment_status: "no_payment_required",
      amount_subtotal: null,
      amount_total: null,
      currency: "usd",
      customer: customer.id,
      customer_creation: null,
      payment_intent: null,
      setup_intent: null,
      metadata: { org_id: "org_123", purpose: "auto_top_up" },
      payment_method_types: ["card"],
      url: `${stand.standin.url}/pay/${session.id}`,
    });
    expect((await stand.stripe.checkout.sessions.listLineItems(session.id)).data).toEqual([]);
  });

  it.each([
    [
      {
        line_items: [
          {
            price_data: { currency: "usd", unit_amount: 500, product_data: { name: "x" } },
            quantity: 1,
          },
        ],
      },
      "line_items",
      "You can not pass `line_items` in `setup` mode.",
    ],
    [
      { payment_intent_data: { metadata: { a: "b" } } },
      "payment_intent_data",
      "You can not pass `payment_intent_data` in `setup` mode.",
    ],
    [
      { setup_intent_data: { metadata: {}, usage: "on_session" } as never },
      "setup_intent_data[usage]",
      "Received unknown parameter: setup_intent_data[usage]",
    ],
    [{ currency: "zzz" }, "currency", "Invalid currency: zzz."],
  ])("refuses %j", async (overrides, param, message) => {
    const customer = await stand.stripe.customers.create({});
    const error = await rejection(
      stand.stripe.checkout.sessions.create(setupParams(customer.id, overrides)),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.statusCode).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
    expect((await stand.stripe.checkout.sessions.list()).data).toHaveLength(0);
  });

  it("refuses an unknown customer, and setup_intent_data in payment mode", async () => {
    const unknown = await rejection(
      stand.stripe.checkout.sessions.create(setupParams("cus_test_missing")),
    );
    expect(unknown).toMatchObject({
      statusCode: 400,
      code: "resource_missing",
      param: "customer",
      message: "No such customer: 'cus_test_missing'",
    });
    const paymentMode = await rejection(
      stand.stripe.checkout.sessions.create({
        mode: "payment",
        line_items: [
          {
            price_data: { currency: "usd", unit_amount: 500, product_data: { name: "x" } },
            quantity: 1,
          },
        ],
        setup_intent_data: { metadata: { a: "b" } },
      }),
    );
    expect(paymentMode.message).toBe("You can not pass `setup_intent_data` in `payment` mode.");
  });

  it("saves the card when paid through the control route: SetupIntent, PaymentMethod, events in order", async () => {
    const customer = await stand.stripe.customers.create({
      email: "owner@example.com",
      name: "Ada",
    });
    const session = await stand.stripe.checkout.sessions.create(setupParams(customer.id));
    const paid = await controlPay(session.id, { card: DECLINED });
    expect(paid.status).toBe(200);
    expect(paid.body.outcome).toBe("setup_succeeded");
    expect(paid.body.session).toMatchObject({ status: "complete", url: null });

    const completed = await stand.stripe.checkout.sessions.retrieve(session.id, {
      expand: ["setup_intent", "setup_intent.payment_method"],
    });
    expect(completed).toMatchObject({
      status: "complete",
      payment_status: "no_payment_required",
      payment_intent: null,
      customer_details: { email: "owner@example.com", name: "Ada" },
    });
    const expanded = completed.setup_intent as Stripe.SetupIntent;
    expect(expanded.id).toMatch(/^seti_test_/);
    expect((expanded.payment_method as Stripe.PaymentMethod).card?.last4).toBe("0341");

    const setupIntent = await stand.stripe.setupIntents.retrieve(expanded.id, {
      expand: ["payment_method"],
    });
    expect(setupIntent).toMatchObject({
      object: "setup_intent",
      status: "succeeded",
      customer: customer.id,
      usage: "off_session",
      metadata: { org_id: "org_123" },
      description: "Auto top-up card",
      payment_method_types: ["card"],
      livemode: false,
    });
    const pm = setupIntent.payment_method as Stripe.PaymentMethod;
    expect(pm).toMatchObject({
      object: "payment_method",
      type: "card",
      customer: customer.id,
      metadata: {},
      livemode: false,
      billing_details: { email: "owner@example.com", name: "Ada" },
      card: {
        brand: "visa",
        last4: "0341",
        exp_month: 12,
        exp_year: new Date().getUTCFullYear() + 3,
        country: "US",
        funding: "credit",
      },
    });
    expect(pm.id).toMatch(/^pm_test_/);
    expect((await stand.stripe.paymentMethods.retrieve(pm.id)).customer).toBe(customer.id);
    const listed = await stand.stripe.customers.listPaymentMethods(customer.id, { type: "card" });
    expect(listed.data.map((p) => p.id)).toEqual([pm.id]);
    expect(
      (await stand.stripe.customers.listPaymentMethods(customer.id, { type: "us_bank_account" }))
        .data,
    ).toEqual([]);

    expect(eventTypes()).toEqual([
      "customer.created",
      "payment_method.attached",
      "setup_intent.created",
      "setup_intent.succeeded",
      "checkout.session.completed",
    ]);
    const events = stand.standin.events();
    expect(events[1]?.data.object).toMatchObject({ id: pm.id, customer: customer.id });
    expect(events[3]?.data.object).toMatchObject({ status: "succeeded", payment_method: pm.id });
    expect(events[4]?.data.object).toMatchObject({
      id: session.id,
      status: "complete",
      setup_intent: setupIntent.id,
    });

    const again = await controlPay(session.id, { card: DECLINED });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "checkout_session_not_open" });
    expect(stand.standin.events()).toHaveLength(5);
  });

  it("defaults to 4242 4242 4242 4242 and refuses a number that is not 16 digits, changing nothing", async () => {
    const customer = await stand.stripe.customers.create({});
    const session = await stand.stripe.checkout.sessions.create(setupParams(customer.id));
    const bad = await controlPay(session.id, { card: "4242 4242" });
    expect(bad.status).toBe(402);
    expect(bad.body.error).toMatchObject({
      type: "card_error",
      code: "invalid_number",
      param: "card",
    });
    expect((await stand.stripe.checkout.sessions.retrieve(session.id)).status).toBe("open");
    expect(eventTypes()).toEqual(["customer.created"]);

    const paid = await controlPay(session.id);
    expect(paid.body.payment_method?.card?.last4).toBe("4242");
  });

  it("has a card form on the pay page; a bad number shows an error and saves nothing", async () => {
    const customer = await stand.stripe.customers.create({ email: "owner@example.com" });
    const session = await stand.stripe.checkout.sessions.create(setupParams(customer.id));
    const page = await fetch(session.url ?? "");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/<label for="card">Card number<\/label>/);
    expect(html).toMatch(
      /<input id="card" name="card" type="text"[^>]* value="4242 4242 4242 4242">/,
    );
    expect(html).toContain('<button id="pay" type="submit">Save card</button>');
    expect(html).not.toContain('id="decline"');
    expect(html).not.toContain('id="pay-async"');

    const bad = await fetch(
      session.url ?? "",
      form({ card: "4000 0000 0000 034", email: "x@example.com" }),
    );
    expect(bad.status).toBe(402);
    const badHtml = await bad.text();
    expect(badHtml).toContain('<p id="error" role="alert">Your card number is invalid.</p>');
    expect(badHtml).toContain('value="4000 0000 0000 034"');
    expect((await stand.stripe.checkout.sessions.retrieve(session.id)).status).toBe("open");
    expect((await stand.stripe.customers.listPaymentMethods(customer.id)).data).toEqual([]);
    expect(eventTypes()).toEqual(["customer.created"]);

    const saved = await fetch(session.url ?? "", form({ card: "4000 0000 0000 9995" }));
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`http://127.0.0.1:8787/billing?saved=${session.id}`);
    const [pm] = (await stand.stripe.customers.listPaymentMethods(customer.id)).data;
    expect(pm?.card?.last4).toBe("9995");
    const twice = await fetch(session.url ?? "", form({ card: "4242424242424242" }));
    expect(twice.status).toBe(409);
    expect(await twice.text()).toContain("Card saved");
  });

  it("takes the control route's card in payment mode too: a declining test card declines", async () => {
    const session = await stand.stripe.checkout.sessions.create({
      mode: "payment",
      line_items: [
        {
          price_data: { currency: "usd", unit_amount: 1000, product_data: { name: "x" } },
          quantity: 1,
        },
      ],
    });
    const declined = await controlPay(session.id, { card: INSUFFICIENT_FUNDS });
    expect(declined.body.outcome).toBe("declined");
    expect(declined.body.payment_intent?.last_payment_error).toMatchObject({
      code: "card_declined",
      decline_code: "insufficient_funds",
    });
    const paid = await controlPay(session.id, { card: "4000 0566 5566 5556" });
    expect(paid.body.outcome).toBe("paid");
    expect(paid.body.charge?.payment_method_details?.card?.last4).toBe("5556");
  });
});

describe("off-session PaymentIntents", () => {
  it("charges a saved card: 200, a succeeded PaymentIntent and Charge, three events", async () => {
    const { customer, paymentMethod } = await savedCard();
    const before = stand.standin.events().length;
    const intent = await stand.stripe.paymentIntents.create(
      offSession(customer, paymentMethod, {
        receipt_email: "owner@example.com",
        statement_descriptor_suffix: "TOP-UP",
      }),
    );
    expect(intent.lastResponse.statusCode).toBe(200);
    expect(intent).toMatchObject({
      object: "payment_intent",
      status: "succeeded",
      amount: 2000,
      amount_received: 2000,
      currency: "usd",
      customer,
      payment_method: paymentMethod,
      metadata: { org_id: "org_123", kind: "auto_top_up" },
      description: "Parley auto top-up",
      receipt_email: "owner@example.com",
      last_payment_error: null,
    });
    const charge = await stand.stripe.charges.retrieve(String(intent.latest_charge));
    expect(charge).toMatchObject({
      status: "succeeded",
      paid: true,
      amount: 2000,
      customer,
      payment_intent: intent.id,
      payment_method: paymentMethod,
      payment_method_details: { type: "card", card: { last4: "4242" } },
      calculated_statement_descriptor: "PARLEY* TOP-UP",
    });
    expect(charge.receipt_url).toBe(`${stand.standin.url}/receipts/${charge.id}`);
    expect(eventTypes().slice(before)).toEqual([
      "payment_intent.created",
      "charge.succeeded",
      "payment_intent.succeeded",
    ]);
    expect(stand.standin.events().at(-1)?.request.id).toBe(intent.lastResponse.requestId);
  });

  it("throws StripeCardError for a declined card, with the failed PaymentIntent and Charge", async () => {
    const { customer, paymentMethod } = await savedCard(DECLINED);
    const before = stand.standin.events().length;
    const error = await rejection(
      stand.stripe.paymentIntents.create(offSession(customer, paymentMethod)),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({
      statusCode: 402,
      rawType: "card_error",
      code: "card_declined",
      decline_code: "generic_decline",
      message: "Your card was declined.",
      doc_url: "https://stripe.com/docs/error-codes/card_declined",
    });
    expect(error.payment_intent).toMatchObject({
      object: "payment_intent",
      status: "requires_payment_method",
      amount_received: 0,
      payment_method: null,
      last_payment_error: {
        type: "card_error",
        code: "card_declined",
        decline_code: "generic_decline",
        message: "Your card was declined.",
        charge: error.charge,
        payment_method: { id: paymentMethod },
      },
    });
    expect(error.payment_method?.id).toBe(paymentMethod);
    expect(error.charge).toMatch(/^ch_test_/);
    const charge = await stand.stripe.charges.retrieve(String(error.charge));
    expect(charge).toMatchObject({
      status: "failed",
      failure_code: "card_declined",
      payment_method_details: { card: { last4: "0341" } },
    });
    const stored = await stand.stripe.paymentIntents.retrieve(String(error.payment_intent?.id));
    expect(stored.status).toBe("requires_payment_method");
    expect(eventTypes().slice(before)).toEqual([
      "payment_intent.created",
      "charge.failed",
      "payment_intent.payment_failed",
    ]);
  });

  it("says insufficient funds for 4000 0000 0000 9995", async () => {
    const { customer, paymentMethod } = await savedCard(INSUFFICIENT_FUNDS);
    const error = await rejection(
      stand.stripe.paymentIntents.create(offSession(customer, paymentMethod)),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({
      code: "card_declined",
      decline_code: "insufficient_funds",
      message: "Your card has insufficient funds.",
    });
    expect(error.payment_intent?.status).toBe("requires_payment_method");
  });

  it("answers authentication_required for 4000 0027 6000 3184, without a charge", async () => {
    const { customer, paymentMethod } = await savedCard(NEEDS_AUTHENTICATION);
    const before = stand.standin.events().length;
    const error = await rejection(
      stand.stripe.paymentIntents.create(offSession(customer, paymentMethod)),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({
      statusCode: 402,
      code: "authentication_required",
      message: "Your card was declined. This transaction requires authentication.",
    });
    expect(error.charge).toBeUndefined();
    expect(error.payment_intent).toMatchObject({
      status: "requires_payment_method",
      latest_charge: null,
      last_payment_error: { type: "card_error", code: "authentication_required" },
    });
    expect((await stand.stripe.charges.list()).data).toEqual([]);
    expect(eventTypes().slice(before)).toEqual([
      "payment_intent.created",
      "payment_intent.payment_failed",
    ]);
  });

  it("replays a decline for the same Idempotency-Key without a second PaymentIntent", async () => {
    const { customer, paymentMethod } = await savedCard(DECLINED);
    const params = offSession(customer, paymentMethod);
    const first = await rejection(
      stand.stripe.paymentIntents.create(params, { idempotencyKey: "top-up-1" }),
    );
    const events = stand.standin.events().length;
    const again = await rejection(
      stand.stripe.paymentIntents.create(params, { idempotencyKey: "top-up-1" }),
    );
    expect(again).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(again.statusCode).toBe(402);
    expect(again.headers?.["idempotent-replayed"]).toBe("true");
    expect(again.payment_intent?.id).toBe(first.payment_intent?.id);
    expect(again.charge).toBe(first.charge);
    expect((await stand.stripe.paymentIntents.list({ customer })).data).toHaveLength(1);
    expect((await stand.stripe.charges.list()).data).toHaveLength(1);
    expect(stand.standin.events()).toHaveLength(events);

    const changed = await rejection(
      stand.stripe.paymentIntents.create(
        { ...params, amount: 3000 },
        { idempotencyKey: "top-up-1" },
      ),
    );
    expect(changed).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  it("replays a success without a second charge, and keeps nothing for a refused request", async () => {
    const { customer, paymentMethod } = await savedCard();
    const refused = await rejection(
      stand.stripe.paymentIntents.create(offSession(customer, "pm_test_missing"), {
        idempotencyKey: "top-up-2",
      }),
    );
    expect(refused).toMatchObject({
      statusCode: 400,
      code: "resource_missing",
      param: "payment_method",
    });
    const params = offSession(customer, paymentMethod);
    const first = await stand.stripe.paymentIntents.create(params, { idempotencyKey: "top-up-2" });
    const again = await stand.stripe.paymentIntents.create(params, { idempotencyKey: "top-up-2" });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect((await stand.stripe.paymentIntents.list()).data).toHaveLength(1);
    expect((await stand.stripe.charges.list()).data).toHaveLength(1);
  });

  it("refuses a detached card; detaching twice is Stripe's 400", async () => {
    const { customer, paymentMethod } = await savedCard();
    const detached = await stand.stripe.paymentMethods.detach(paymentMethod);
    expect(detached).toMatchObject({ id: paymentMethod, customer: null });
    const event = stand.standin.events().at(-1);
    expect(event?.type).toBe("payment_method.detached");
    expect(event?.data.previous_attributes).toEqual({ customer });
    expect((await stand.stripe.customers.listPaymentMethods(customer)).data).toEqual([]);

    const charge = await rejection(
      stand.stripe.paymentIntents.create(offSession(customer, paymentMethod)),
    );
    expect(charge).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(charge.message).toBe(
      "The provided PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.",
    );
    expect((await stand.stripe.paymentIntents.list()).data).toEqual([]);

    const twice = await rejection(stand.stripe.paymentMethods.detach(paymentMethod));
    expect(twice).toMatchObject({
      statusCode: 400,
      message:
        "The payment method you provided is not attached to a customer so detachment is impossible.",
    });
    const missing = await rejection(stand.stripe.paymentMethods.retrieve("pm_test_missing"));
    expect(missing).toMatchObject({
      statusCode: 404,
      code: "resource_missing",
      param: "payment_method",
    });
  });

  it("refuses another customer's card", async () => {
    const { paymentMethod } = await savedCard();
    const other = await stand.stripe.customers.create({});
    const error = await rejection(
      stand.stripe.paymentIntents.create(offSession(other.id, paymentMethod)),
    );
    expect(error).toMatchObject({ statusCode: 400, param: "payment_method" });
    expect((await stand.stripe.paymentIntents.list()).data).toEqual([]);
  });

  it.each([
    [{ capture_method: "manual" }, "parameter_unknown", "capture_method"],
    [{ setup_future_usage: "off_session" }, "parameter_unknown", "setup_future_usage"],
    [{ confirm: false }, undefined, "confirm"],
    [{ confirm: undefined }, undefined, "confirm"],
    [{ off_session: false }, undefined, "off_session"],
    [{ payment_method: undefined }, "parameter_missing", "payment_method"],
    [{ customer: undefined }, "parameter_missing", "customer"],
    [{ amount: 10 }, "amount_too_small", "amount"],
    [{ customer: "cus_test_missing" }, "resource_missing", "customer"],
  ] as [Partial<Stripe.PaymentIntentCreateParams>, string | undefined, string][])(
    "refuses %j",
    async (overrides, code, param) => {
      const { customer, paymentMethod } = await savedCard();
      const before = stand.standin.events().length;
      const error = await rejection(
        stand.stripe.paymentIntents.create(offSession(customer, paymentMethod, overrides)),
      );
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error.statusCode).toBe(400);
      expect(error.code).toBe(code);
      expect(error.param).toBe(param);
      if (code === undefined) expect(error.message).toContain("does not model");
      expect((await stand.stripe.paymentIntents.list()).data).toEqual([]);
      expect(stand.standin.events()).toHaveLength(before);
    },
  );
});

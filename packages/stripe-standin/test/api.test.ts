/**
 * The `/v1` API through the real `stripe@23.1.0` client: Checkout Sessions with idempotency
 * keys, validation errors of the right class, retrieval with expand, expiry, lists, auth.
 */
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { DEFAULT_API_VERSION, startStripeStandin } from "../src/index.ts";
import { rejection, standinPerFile, stripeClient, topUpParams } from "./helpers.ts";

const stand = standinPerFile("whsec_api_test");

describe("POST /v1/checkout/sessions", () => {
  it("creates an open, unpaid session whose url is the stand-in's pay page", async () => {
    const session = await stand.stripe.checkout.sessions.create(topUpParams());
    expect(session.id).toMatch(/^cs_test_[0-9A-Za-z]{58}$/);
    expect(session).toMatchObject({
      object: "checkout.session",
      mode: "payment",
      status: "open",
      payment_status: "unpaid",
      amount_subtotal: 2000,
      amount_total: 2000,
      currency: "usd",
      client_reference_id: "org_123",
      metadata: { org_id: "org_123", amount_micros: "20000000" },
      customer: null,
      customer_creation: "if_required",
      payment_intent: null,
      livemode: false,
      success_url: "http://127.0.0.1:8787/billing?session={CHECKOUT_SESSION_ID}",
      cancel_url: "http://127.0.0.1:8787/billing?cancelled=1",
      url: `${stand.standin.url}/pay/${session.id}`,
    });
    const nowS = Math.floor(Date.now() / 1000);
    expect(Math.abs(session.created - nowS)).toBeLessThanOrEqual(2);
    expect(session.expires_at - session.created).toBe(24 * 60 * 60);
    expect(session.lastResponse.headers["stripe-version"]).toBe(Stripe.API_VERSION);
    expect(session.lastResponse.requestId).toMatch(/^req_test_/);
  });

  it("returns the same session for the same idempotency key and parameters", async () => {
    const first = await stand.stripe.checkout.sessions.create(topUpParams(), {
      idempotencyKey: "top-1",
    });
    const again = await stand.stripe.checkout.sessions.create(topUpParams(), {
      idempotencyKey: "top-1",
    });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    const other = await stand.stripe.checkout.sessions.create(topUpParams(), {
      idempotencyKey: "top-2",
    });
    expect(other.id).not.toBe(first.id);
    const listed = await stand.stripe.checkout.sessions.list();
    expect(listed.data.map((s) => s.id)).toEqual([other.id, first.id]);
  });

  it("refuses the same key with other parameters or on another endpoint (idempotency_error)", async () => {
    await stand.stripe.checkout.sessions.create(topUpParams(), { idempotencyKey: "top-3" });
    const changed = await rejection(
      stand.stripe.checkout.sessions.create(topUpParams({ client_reference_id: "org_456" }), {
        idempotencyKey: "top-3",
      }),
    );
    expect(changed).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(changed.rawType).toBe("idempotency_error");
    expect(changed.statusCode).toBe(400);
    expect(changed.message).toContain("same parameters");

    const elsewhere = await rejection(
      stand.stripe.customers.create({ email: "a@example.com" }, { idempotencyKey: "top-3" }),
    );
    expect(elsewhere).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(elsewhere.message).toContain("'POST /v1/checkout/sessions' vs 'POST /v1/customers'");
    expect((await stand.stripe.checkout.sessions.list()).data).toHaveLength(1);
  });

  it("keeps no result for a refused request, so the key can be retried with fixed parameters", async () => {
    const bad = await rejection(
      stand.stripe.checkout.sessions.create(topUpParams({ mode: undefined }), {
        idempotencyKey: "k",
      }),
    );
    expect(bad).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const good = await stand.stripe.checkout.sessions.create(topUpParams(), {
      idempotencyKey: "k",
    });
    expect(good.status).toBe("open");
  });

  it.each([
    [{ mode: undefined }, "parameter_missing", "mode", "Missing required param: mode."],
    [{ line_items: [] }, "parameter_missing", "line_items", "Missing required param: line_items."],
    [
      {
        line_items: [
          { price_data: { currency: "usd", unit_amount: 500, product_data: { name: "x" } } },
        ],
      },
      "parameter_missing",
      "line_items[0][quantity]",
      "Missing required param: line_items[0][quantity].",
    ],
    [
      {
        line_items: [{ price_data: { currency: "usd", product_data: { name: "x" } }, quantity: 1 }],
      },
      "parameter_missing",
      "line_items[0][price_data][unit_amount]",
      "Missing required param: line_items[0][price_data][unit_amount].",
    ],
    [
      { customer: "cus_test_1", customer_email: "a@example.com" },
      "parameters_exclusive",
      undefined,
      "You may only specify one of these parameters: customer, customer_email.",
    ],
    [
      { customer: "cus_test_missing" },
      "resource_missing",
      "customer",
      "No such customer: 'cus_test_missing'",
    ],
    [
      { line_items: [{ price: "price_123", quantity: 1 }] },
      "resource_missing",
      "line_items[0][price]",
      "No such price: 'price_123'",
    ],
  ] as const)("refuses %j with a Stripe-shaped 400", async (overrides, code, param, message) => {
    const error = await rejection(
      stand.stripe.checkout.sessions.create(
        topUpParams(overrides as Partial<Stripe.Checkout.SessionCreateParams>),
      ),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.statusCode).toBe(400);
    expect(error.rawType).toBe("invalid_request_error");
    expect(error.code).toBe(code);
    expect(error.param).toBe(param);
    expect(error.message).toBe(message);
  });

  it("refuses an unknown parameter, a total below Stripe's minimum and a non-payment mode", async () => {
    const unknown = await rejection(
      stand.stripe.checkout.sessions.create({
        ...topUpParams(),
        metadta: { org_id: "x" },
      } as Stripe.Checkout.SessionCreateParams),
    );
    expect(unknown.code).toBe("parameter_unknown");
    expect(unknown.message).toBe("Received unknown parameter: metadta");

    const small = await rejection(
      stand.stripe.checkout.sessions.create(
        topUpParams({
          line_items: [
            {
              price_data: { currency: "usd", unit_amount: 49, product_data: { name: "x" } },
              quantity: 1,
            },
          ],
        }),
      ),
    );
    expect(small.message).toBe(
      "The Checkout Session's total amount due must add up to at least $0.50 usd",
    );

    const subscription = await rejection(
      stand.stripe.checkout.sessions.create(topUpParams({ mode: "subscription" })),
    );
    expect(subscription.param).toBe("mode");
    expect(subscription.message).toContain("does not model mode=subscription");
    expect((await stand.stripe.checkout.sessions.list()).data).toEqual([]);
  });
});

describe("GET /v1/checkout/sessions/:id and expire", () => {
  it("retrieves a session, expanding payment_intent and line_items after payment", async () => {
    const session = await stand.stripe.checkout.sessions.create(topUpParams());
    const before = await stand.stripe.checkout.sessions.retrieve(session.id, {
      expand: ["payment_intent"],
    });
    expect(before.payment_intent).toBeNull();

    await stand.standin.pay(session.id);
    const after = await stand.stripe.checkout.sessions.retrieve(session.id, {
      expand: ["payment_intent.latest_charge", "line_items"],
    });
    expect(after).toMatchObject({ status: "complete", payment_status: "paid", url: null });
    const intent = after.payment_intent as Stripe.PaymentIntent;
    expect(intent).toMatchObject({
      object: "payment_intent",
      status: "succeeded",
      amount: 2000,
      amount_received: 2000,
      currency: "usd",
      metadata: { org_id: "org_123" },
    });
    expect(intent.id).toMatch(/^pi_test_/);
    const charge = intent.latest_charge as Stripe.Charge;
    expect(charge).toMatchObject({
      object: "charge",
      status: "succeeded",
      paid: true,
      amount: 2000,
      amount_refunded: 0,
      refunded: false,
      payment_intent: intent.id,
    });
    expect(charge.id).toMatch(/^ch_test_/);
    expect(after.line_items?.data).toMatchObject([
      { object: "item", description: "Parley credits", quantity: 2, amount_total: 2000 },
    ]);

    // Unexpanded, the ids are plain strings, and both objects are retrievable on their own.
    const plain = await stand.stripe.checkout.sessions.retrieve(session.id);
    expect(plain.payment_intent).toBe(intent.id);
    expect((await stand.stripe.paymentIntents.retrieve(intent.id)).latest_charge).toBe(charge.id);
    expect((await stand.stripe.charges.retrieve(charge.id)).amount).toBe(2000);
  });

  it("expires an open session once, with checkout.session.expired", async () => {
    const session = await stand.stripe.checkout.sessions.create(topUpParams());
    const expired = await stand.stripe.checkout.sessions.expire(session.id);
    expect(expired).toMatchObject({ id: session.id, status: "expired", url: null });
    const again = await rejection(stand.stripe.checkout.sessions.expire(session.id));
    expect(again.message).toContain('This Checkout Session has a status of "expired"');
    await expect(stand.standin.pay(session.id)).rejects.toMatchObject({
      status: 409,
      code: "checkout_session_not_open",
    });
    expect(stand.standin.events().map((e) => e.type)).toEqual(["checkout.session.expired"]);
  });

  it("answers unknown ids with StripeInvalidRequestError resource_missing (404)", async () => {
    const cases: [Promise<unknown>, string][] = [
      [
        stand.stripe.checkout.sessions.retrieve("cs_test_nope"),
        "No such checkout.session: 'cs_test_nope'",
      ],
      [
        stand.stripe.paymentIntents.retrieve("pi_test_nope"),
        "No such payment_intent: 'pi_test_nope'",
      ],
      [stand.stripe.charges.retrieve("ch_test_nope"), "No such charge: 'ch_test_nope'"],
      [stand.stripe.events.retrieve("evt_test_nope"), "No such event: 'evt_test_nope'"],
      [
        stand.stripe.checkout.sessions.expire("cs_test_nope"),
        "No such checkout.session: 'cs_test_nope'",
      ],
    ];
    for (const [call, message] of cases) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error.code).toBe("resource_missing");
      expect(error.statusCode).toBe(404);
      expect(error.message).toBe(message);
    }
  });
});

describe("events and lists", () => {
  it("lists events newest first with limit, cursor and type filter", async () => {
    const session = await stand.stripe.checkout.sessions.create(topUpParams());
    await stand.standin.pay(session.id);
    const all = await stand.stripe.events.list();
    expect(all.data.map((e) => e.type)).toEqual([
      "checkout.session.completed",
      "payment_intent.succeeded",
      "charge.succeeded",
      "payment_intent.created",
    ]);
    expect(all).toMatchObject({ object: "list", has_more: false, url: "/v1/events" });
    const first = all.data[0];
    expect(first).toMatchObject({
      object: "event",
      api_version: Stripe.API_VERSION,
      livemode: false,
      request: { id: null, idempotency_key: null },
    });
    expect(first?.id).toMatch(/^evt_test_/);

    const page = await stand.stripe.events.list({ limit: 2 });
    expect(page.has_more).toBe(true);
    const next = await stand.stripe.events.list({ limit: 2, starting_after: page.data[1]?.id });
    expect([...page.data, ...next.data].map((e) => e.id)).toEqual(all.data.map((e) => e.id));
    expect(next.has_more).toBe(false);

    const completed = await stand.stripe.events.list({ type: "checkout.session.*" });
    expect(completed.data.map((e) => e.type)).toEqual(["checkout.session.completed"]);
    const retrieved = await stand.stripe.events.retrieve(completed.data[0]?.id ?? "");
    expect((retrieved.data.object as Stripe.Checkout.Session).payment_status).toBe("paid");
  });

  it("stamps the API version of stripe@23.1.0 by default", () => {
    expect(DEFAULT_API_VERSION).toBe(Stripe.API_VERSION);
  });

  it("records the request id and idempotency key of API-made changes on their events", async () => {
    const customer = await stand.stripe.customers.create(
      { email: "owner@example.com", metadata: { org_id: "org_123" } },
      { idempotencyKey: "customer-org_123" },
    );
    expect(customer).toMatchObject({
      object: "customer",
      email: "owner@example.com",
      metadata: { org_id: "org_123" },
    });
    expect(customer.id).toMatch(/^cus_test_/);
    const [event] = stand.standin.events();
    expect(event).toMatchObject({
      type: "customer.created",
      request: { id: customer.lastResponse.requestId, idempotency_key: "customer-org_123" },
    });
    const found = await stand.stripe.customers.list({ email: "owner@example.com" });
    expect(found.data.map((c) => c.id)).toEqual([customer.id]);
  });
});

describe("authentication and routing", () => {
  it("answers a request without a key with 401", async () => {
    const response = await fetch(`${stand.standin.url}/v1/checkout/sessions/cs_test_x`);
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/^You did not provide an API key/);
  });

  it("refuses a key that is not sk_test_ with StripeAuthenticationError, without echoing it", async () => {
    const live = stripeClient(stand.standin, "sk_live_supersecretvalue1234");
    const error = await rejection(live.checkout.sessions.create(topUpParams()));
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(error.statusCode).toBe(401);
    expect(error.message).toContain("sk_live_****1234");
    expect(error.message).not.toContain("supersecret");
    expect((await stand.stripe.checkout.sessions.list()).data).toEqual([]);
  });

  it("answers an unknown path with a Stripe-shaped 404", async () => {
    const response = await fetch(`${stand.standin.url}/v1/products`, {
      headers: { authorization: "Bearer sk_test_x" },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "resource_missing" },
    });
    const error = await rejection(stand.stripe.rawRequest("GET", "/v1/subscriptions/sub_123"));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.message).toMatch(
      /^Unrecognized request URL \(GET: \/v1\/subscriptions\/sub_123\)/,
    );
  });

  it("refuses a JSON body, as Stripe's v1 API does", async () => {
    const response = await fetch(`${stand.standin.url}/v1/customers`, {
      method: "POST",
      headers: { authorization: "Bearer sk_test_x", "content-type": "application/json" },
      body: JSON.stringify({ email: "a@example.com" }),
    });
    expect(response.status).toBe(400);
    expect(stand.standin.events()).toEqual([]);
  });
});

describe("expiry by the clock", () => {
  it("expires a session whose expires_at has passed on the next read", async () => {
    let nowMs = Date.UTC(2026, 0, 1);
    const clocked = await startStripeStandin({ now: () => nowMs });
    try {
      const client = stripeClient(clocked);
      const session = await client.checkout.sessions.create(topUpParams());
      expect(session.expires_at).toBe(nowMs / 1000 + 86_400);
      nowMs += 86_400_000;
      const read = await client.checkout.sessions.retrieve(session.id);
      expect(read).toMatchObject({ status: "expired", url: null });
      expect(clocked.events().map((e) => [e.type, e.created])).toEqual([
        ["checkout.session.expired", nowMs / 1000],
      ]);
    } finally {
      await clocked.close();
    }
  });
});

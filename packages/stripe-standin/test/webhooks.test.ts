/**
 * Paying (through the HTML form and the control API) and the webhooks that follow: signatures
 * verified by the real client's constructEventAsync with SubtleCrypto, retries, order, replay.
 */
import Stripe from "stripe";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type StripeStandin, signatureHeader, startStripeStandin } from "../src/index.ts";
import { type Receiver, startReceiver, stripeClient, topUpParams, verify } from "./helpers.ts";

const SECRET = "whsec_webhooks_test";
const FAST = { attempts: 5, baseDelayMs: 5 };

let standin: StripeStandin;
let stripe: Stripe;
let receiver: Receiver;

beforeAll(async () => {
  standin = await startStripeStandin({ webhookSecret: SECRET, retry: FAST });
  stripe = stripeClient(standin);
});

afterAll(async () => {
  await standin.close();
});

afterEach(async () => {
  standin.setWebhookUrl([]);
  await standin.reset();
  await receiver?.close();
});

async function withReceiver(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  receiver = await startReceiver(respond);
  standin.setWebhookUrl(receiver.url);
  return receiver;
}

function form(fields: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  };
}

describe("the pay page", () => {
  it("serves the amount, the product and a Pay button, then pays and redirects to success_url", async () => {
    const hook = await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    const page = await fetch(session.url ?? "");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    expect(html).toContain('<span id="amount">$20.00</span>');
    expect(html).toContain("<td>Parley credits</td>");
    expect(html).toContain(
      '<button id="pay" type="submit" name="outcome" value="succeed">Pay</button>',
    );
    expect(html).toContain(`<form method="post" action="${session.id}">`);
    expect(html).toContain(`<a id="cancel" href="${session.id}/cancel">Cancel</a>`);

    const paid = await fetch(
      session.url ?? "",
      form({ outcome: "succeed", email: "payer@example.com" }),
    );
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toBe(
      `http://127.0.0.1:8787/billing?session=${session.id}`,
    );

    await standin.idle();
    const completed = hook.received.find((r) => r.event.type === "checkout.session.completed");
    expect(completed).toBeDefined();
    const event = await verify(stripe, completed ?? { body: "", signature: "" }, SECRET);
    const object = event.data.object as Stripe.Checkout.Session;
    expect(object).toMatchObject({
      id: session.id,
      status: "complete",
      payment_status: "paid",
      amount_total: 2000,
      client_reference_id: "org_123",
      metadata: { org_id: "org_123", amount_micros: "20000000" },
      customer_details: { email: "payer@example.com" },
    });
    expect(object.payment_intent).toMatch(/^pi_test_/);
    expect(event.pending_webhooks).toBe(1);
    expect(hook.types()).toEqual([
      "payment_intent.created",
      "charge.succeeded",
      "payment_intent.succeeded",
      "checkout.session.completed",
    ]);
  });

  it("does not pay twice: a second submit gets 409 and a page that says so", async () => {
    await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    expect((await fetch(session.url ?? "", form({ outcome: "succeed" }))).status).toBe(303);
    const again = await fetch(session.url ?? "", form({ outcome: "succeed" }));
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("It cannot be paid twice.");
    expect((await fetch(session.url ?? "")).status).toBe(200);
    expect((await stripe.charges.list()).data).toHaveLength(1);
    await standin.idle();
    expect(receiver.types().filter((t) => t === "checkout.session.completed")).toHaveLength(1);
  });

  it("keeps the session open after a declined card, and the next attempt reuses the PaymentIntent", async () => {
    const hook = await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    const declined = await fetch(session.url ?? "", form({ outcome: "decline" }));
    expect(declined.status).toBe(402);
    expect(await declined.text()).toContain(
      '<p id="error" role="alert">Your card was declined.</p>',
    );
    const open = await stripe.checkout.sessions.retrieve(session.id, {
      expand: ["payment_intent"],
    });
    expect(open.status).toBe("open");
    const intent = open.payment_intent as Stripe.PaymentIntent;
    expect(intent).toMatchObject({
      status: "requires_payment_method",
      last_payment_error: { code: "card_declined", decline_code: "generic_decline" },
    });

    await standin.pay(session.id);
    const paid = await stripe.checkout.sessions.retrieve(session.id);
    expect(paid.payment_intent).toBe(intent.id);
    expect(
      (await stripe.charges.list({ payment_intent: intent.id })).data.map((c) => c.status),
    ).toEqual(["succeeded", "failed"]);
    await standin.idle();
    expect(hook.types()).toEqual([
      "payment_intent.created",
      "charge.failed",
      "payment_intent.payment_failed",
      "charge.succeeded",
      "payment_intent.succeeded",
      "checkout.session.completed",
    ]);
  });

  it("sends Cancel to cancel_url and says so on an expired session", async () => {
    const session = await stripe.checkout.sessions.create(topUpParams());
    const cancel = await fetch(`${standin.url}/pay/${session.id}/cancel`, { redirect: "manual" });
    expect(cancel.status).toBe(303);
    expect(cancel.headers.get("location")).toBe("http://127.0.0.1:8787/billing?cancelled=1");
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe("open");

    await stripe.checkout.sessions.expire(session.id);
    const page = await fetch(`${standin.url}/pay/${session.id}`);
    expect(await page.text()).toContain("This checkout session has expired");
    const post = await fetch(`${standin.url}/pay/${session.id}`, form({ outcome: "succeed" }));
    expect(post.status).toBe(410);
    expect((await stripe.charges.list()).data).toEqual([]);
  });
});

describe("signatures", () => {
  it("fail verification for a tampered body or the wrong secret", async () => {
    const hook = await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    await standin.pay(session.id);
    await standin.idle();
    const delivered = hook.received.at(-1);
    if (delivered === undefined) throw new Error("no webhook received");
    expect(delivered.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // Stripe pretty-prints; a receiver must verify the raw bytes.
    expect(delivered.body.startsWith('{\n  "id": "evt_test_')).toBe(true);
    expect(delivered.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(delivered.headers["user-agent"]).toBe("Stripe/1.0 (+https://stripe.com/docs/webhooks)");

    await expect(verify(stripe, delivered, SECRET)).resolves.toMatchObject({
      type: "checkout.session.completed",
    });
    const tampered = {
      ...delivered,
      body: delivered.body.replace('"amount_total": 2000', '"amount_total": 9000'),
    };
    expect(tampered.body).not.toBe(delivered.body);
    await expect(verify(stripe, tampered, SECRET)).rejects.toBeInstanceOf(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const reserialised = { ...delivered, body: JSON.stringify(JSON.parse(delivered.body)) };
    await expect(verify(stripe, reserialised, SECRET)).rejects.toBeInstanceOf(
      Stripe.errors.StripeSignatureVerificationError,
    );
    await expect(verify(stripe, delivered, "whsec_other")).rejects.toBeInstanceOf(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it("equal what the stripe client's own test helper computes", async () => {
    const payload = '{\n  "id": "evt_1"\n}';
    const expected = await stripe.webhooks.generateTestHeaderStringAsync({
      payload,
      secret: SECRET,
      timestamp: 1_767_225_600,
    });
    expect(signatureHeader(payload, SECRET, 1_767_225_600)).toBe(expected);
  });
});

describe("delivery", () => {
  it("retries a 500 with the same event id until a 2xx: 3 attempts for 500, 500, 200", async () => {
    const hook = await withReceiver((request, earlier) => {
      if (request.event.type !== "checkout.session.completed") return 200;
      return earlier.filter((r) => r.event.id === request.event.id).length < 2 ? 500 : 200;
    });
    const session = await stripe.checkout.sessions.create(topUpParams());
    await standin.pay(session.id);
    await standin.idle();

    const attempts = hook.received.filter((r) => r.event.type === "checkout.session.completed");
    expect(attempts).toHaveLength(3);
    const ids = new Set(attempts.map((r) => r.event.id));
    expect(ids.size).toBe(1);
    for (const attempt of attempts) await verify(stripe, attempt, SECRET);
    const [id] = [...ids];
    const log = standin.deliveries().filter((d) => d.eventId === id);
    expect(log.map((d) => [d.attempt, d.status, d.ok, d.willRetry])).toEqual([
      [1, 500, false, true],
      [2, 500, false, true],
      [3, 200, true, false],
    ]);
    const event = standin.events().find((e) => e.id === id);
    expect(event?.pending_webhooks).toBe(0);
  });

  it("gives up after the configured attempts on network errors, then goes on with the next event", async () => {
    const closed = await startReceiver();
    await closed.close();
    const hook = await withReceiver();
    standin.setWebhookUrl([closed.url, hook.url]);
    const session = await stripe.checkout.sessions.create(topUpParams());
    await standin.pay(session.id);
    await standin.idle();
    const refused = standin.deliveries().filter((d) => d.url === closed.url);
    // 4 events x 5 attempts, each refused, none blocking the other endpoint.
    expect(refused).toHaveLength(20);
    expect(refused.every((d) => d.status === null && d.error === "ECONNREFUSED")).toBe(true);
    expect(refused.filter((d) => !d.willRetry).map((d) => d.attempt)).toEqual([5, 5, 5, 5]);
    expect(hook.types()).toHaveLength(4);
    expect(standin.events().every((e) => e.pending_webhooks === 1)).toBe(true);
  });

  it("emits completed (unpaid) and then async_payment_succeeded for a delayed method", async () => {
    const hook = await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    const response = await fetch(`${standin.url}/__standin/checkout/sessions/${session.id}/pay`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ async: true }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ outcome: "async_succeeded" });
    await standin.idle();
    const checkout = hook.received.filter((r) => r.event.type.startsWith("checkout.session."));
    const events = await Promise.all(checkout.map((r) => verify(stripe, r, SECRET)));
    expect(
      events.map((e) => [e.type, (e.data.object as Stripe.Checkout.Session).payment_status]),
    ).toEqual([
      ["checkout.session.completed", "unpaid"],
      ["checkout.session.async_payment_succeeded", "paid"],
    ]);
    expect(hook.types()).toEqual([
      "payment_intent.created",
      "charge.pending",
      "payment_intent.processing",
      "checkout.session.completed",
      "charge.succeeded",
      "payment_intent.succeeded",
      "checkout.session.async_payment_succeeded",
    ]);
  });

  it("emits completed (unpaid) and then async_payment_failed when the delayed method fails", async () => {
    const hook = await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    const result = await standin.pay(session.id, { async: true, fail: true });
    expect(result.outcome).toBe("async_failed");
    await standin.idle();
    expect(hook.types().filter((t) => t.startsWith("checkout."))).toEqual([
      "checkout.session.completed",
      "checkout.session.async_payment_failed",
    ]);
    const final = await stripe.checkout.sessions.retrieve(session.id, {
      expand: ["payment_intent"],
    });
    expect(final).toMatchObject({ status: "complete", payment_status: "unpaid" });
    expect((final.payment_intent as Stripe.PaymentIntent).status).toBe("requires_payment_method");
    const page = await (await fetch(`${standin.url}/pay/${session.id}`)).text();
    expect(page).toContain('<h1 id="status">Payment failed</h1>');
  });

  it("re-delivers an event with the same id on resend", async () => {
    const hook = await withReceiver();
    const session = await stripe.checkout.sessions.create(topUpParams());
    await standin.pay(session.id);
    await standin.idle();
    const completed = standin.events().find((e) => e.type === "checkout.session.completed");
    const response = await fetch(`${standin.url}/__standin/events/${completed?.id}/resend`, {
      method: "POST",
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ id: completed?.id, urls: [hook.url] });
    await standin.idle();
    const copies = hook.received.filter((r) => r.event.id === completed?.id);
    expect(copies).toHaveLength(2);
    for (const copy of copies) await verify(stripe, copy, SECRET);

    const listing = await fetch(`${standin.url}/__standin/events`);
    const body = (await listing.json()) as { events: unknown[]; deliveries: { eventId: string }[] };
    expect(body.events).toHaveLength(4);
    expect(body.deliveries.filter((d) => d.eventId === completed?.id)).toHaveLength(2);

    const missing = await fetch(`${standin.url}/__standin/events/evt_test_nope/resend`, {
      method: "POST",
    });
    expect(missing.status).toBe(404);
  });

  it("only delivers the enabled event types, and records all", async () => {
    const hook = await startReceiver();
    const filtered = await startStripeStandin({
      webhookUrl: hook.url,
      webhookSecret: SECRET,
      retry: FAST,
      enabledEvents: ["checkout.session.*", "charge.refunded"],
    });
    try {
      const client = stripeClient(filtered);
      const session = await client.checkout.sessions.create(topUpParams());
      await filtered.pay(session.id);
      await filtered.idle();
      expect(hook.types()).toEqual(["checkout.session.completed"]);
      expect(filtered.events()).toHaveLength(4);
    } finally {
      await filtered.close();
      await hook.close();
    }
  });
});

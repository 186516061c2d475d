import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { api, errorCode, world } from "./helpers.ts";
import { eventually, replay, standinStripe as stripe, stripeDeliveries } from "./stripe.ts";

/**
 * Checkout end to end against the Stripe stand-in: the real `stripe` client creates the session,
 * the stand-in takes the payment and signs its webhooks exactly as Stripe does; the mailbox hands
 * them to us and we deliver them, byte for byte, to the Worker (test/stripe.ts).
 */
describe("Stripe Checkout top-up", () => {
  it("grants exactly what Stripe says was paid, once, and refunds become negative adjustments", async () => {
    const w = await world();
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 0 });
    const start = (await account.balance()).postedMicros;

    const checkout = await api<{ id: string; url: string }>(
      "POST",
      `/api/orgs/${w.orgId}/billing/checkout`,
      {
        token: w.admin.token,
        body: { amountMicros: 20_000_000 },
      },
    );
    expect(checkout.status).toBe(201);
    expect(checkout.body.url).toBe(`${env.STRIPE_API_URL}/pay/${checkout.body.id}`);
    const session = await stripe.checkout.sessions.retrieve(checkout.body.id);
    expect(session).toMatchObject({
      mode: "payment",
      amount_total: 2_000,
      currency: "usd",
      client_reference_id: w.orgId,
      metadata: { orgId: w.orgId },
    });
    // Nothing at Stripe names the member who paid (erasure could not reach it there).
    expect(session.metadata).toEqual({ orgId: w.orgId });

    const paid = await fetch(
      `${env.STRIPE_API_URL}/__standin/checkout/sessions/${checkout.body.id}/pay`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      },
    );
    expect(paid.status).toBe(200);
    const completed = await eventually(checkout.body.id, "checkout.session.completed");
    expect((await replay(completed)).body).toEqual({ received: true, outcome: "applied" });
    expect((await replay(completed)).body).toEqual({ received: true, outcome: "duplicate" });
    expect((await account.balance()).postedMicros).toBe(start + 20_000_000);

    const paymentIntent = (await stripe.checkout.sessions.retrieve(checkout.body.id))
      .payment_intent as string;
    await stripe.refunds.create({ payment_intent: paymentIntent, amount: 500 });
    const refunded = await eventually(paymentIntent, "charge.refunded");
    expect((await replay(refunded)).status).toBe(200);
    expect((await account.balance()).postedMicros).toBe(start + 15_000_000);
    expect((await account.reconcile()).ok).toBe(true);
  });

  it("lists each paid top-up with Stripe's receipt, its amount and what became of it", async () => {
    const w = await world();
    await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros: 0 });
    const payments = `/api/orgs/${w.orgId}/billing/payments`;
    const pay = async (amountMicros: number) => {
      const checkout = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/billing/checkout`, {
        token: w.admin.token,
        body: { amountMicros },
      });
      await fetch(`${env.STRIPE_API_URL}/__standin/checkout/sessions/${checkout.body.id}/pay`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      await replay(await eventually(checkout.body.id, "checkout.session.completed"));
      return (await stripe.checkout.sessions.retrieve(checkout.body.id)).payment_intent as string;
    };
    const first = await pay(20_000_000);
    const second = await pay(5_000_000);
    type Listed = { items: Record<string, unknown>[]; nextCursor: string | null };
    const listed = await api<Listed>("GET", payments, { token: w.admin.token });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((p) => [p.id, p.amountMicros, p.status])).toEqual([
      [second, 5_000_000, "paid"],
      [first, 20_000_000, "paid"],
    ]);
    // The receipt is Stripe's own page of the charge, and it opens.
    const receipt = String(listed.body.items[1]?.receiptUrl);
    const charge = (await stripe.charges.list({ payment_intent: first })).data[0];
    expect(receipt).toBe(charge?.receipt_url);
    const page = await fetch(receipt);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("$20.00");
    // Refunded in part, then whole: the verified webhooks say so, never backwards.
    await stripe.refunds.create({ payment_intent: first, amount: 500 });
    const partly = await eventually(first, "charge.refunded");
    await replay(partly);
    const after = await api<Listed>("GET", payments, { token: w.admin.token });
    expect(after.body.items[1]).toMatchObject({
      status: "partially_refunded",
      refundedMicros: 5_000_000,
    });
    await stripe.refunds.create({ payment_intent: first, amount: 1_500 });
    const deliveries = (await stripeDeliveries(first)).filter(
      (d) => JSON.parse(d.body).type === "charge.refunded",
    );
    for (let i = 0; i < 100 && deliveries.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      deliveries.splice(
        0,
        deliveries.length,
        ...(await stripeDeliveries(first)).filter(
          (d) => JSON.parse(d.body).type === "charge.refunded",
        ),
      );
    }
    for (const delivery of deliveries.reverse()) await replay(delivery);
    const whole = await api<Listed>("GET", payments, { token: w.admin.token });
    expect(whole.body.items[1]).toMatchObject({ status: "refunded", refundedMicros: 20_000_000 });
    // Paged, and only for owners and admins.
    const one = await api<Listed>("GET", `${payments}?limit=1`, { token: w.admin.token });
    expect(one.body.items).toHaveLength(1);
    const next = await api<Listed>(
      "GET",
      `${payments}?limit=1&cursor=${encodeURIComponent(one.body.nextCursor ?? "")}`,
      { token: w.admin.token },
    );
    expect(next.body.items.map((p) => p.id)).toEqual([first]);
    expect((await api("GET", payments, { token: w.member.token })).status).toBe(403);
    // At most 25 a page (each may ask Stripe for its receipt): more is refused, not cut.
    const big = await api("GET", `${payments}?limit=26`, { token: w.admin.token });
    expect(big.status).toBe(400);
    expect(errorCode(big)).toBe("invalid_request");
  });

  it("refuses amounts out of bounds or not in whole cents, creating no session", async () => {
    const w = await world();
    const path = `/api/orgs/${w.orgId}/billing/checkout`;
    for (const amountMicros of [1_000_000, 2_000_000_000, 10_000_001, -5, 12.5]) {
      const res = await api("POST", path, { token: w.owner.token, body: { amountMicros } });
      expect(res.status, String(amountMicros)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
  });

  it("one Idempotency-Key makes one Checkout Session, however often it is sent", async () => {
    const w = await world();
    const send = () =>
      api<{ id: string }>("POST", `/api/orgs/${w.orgId}/billing/checkout`, {
        token: w.owner.token,
        body: { amountMicros: 5_000_000 },
        headers: { "idempotency-key": "topup-button-click-1" },
      });
    const [a, b] = [await send(), await send()];
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
  });

  it("gives admins a customer portal link for receipts and cards", async () => {
    const w = await world();
    const res = await api<{ url: string }>("POST", `/api/orgs/${w.orgId}/billing/portal`, {
      token: w.admin.token,
    });
    expect(res.status).toBe(201);
    expect(res.body.url).toContain(env.STRIPE_API_URL);
    expect((await fetch(res.body.url)).status).toBe(200);
  });
});

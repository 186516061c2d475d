import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { api, errorCode, world } from "./helpers.ts";
import {
  balanceOf,
  checkoutEvent,
  deliver,
  post,
  refundEvent,
  sign,
  startedSession,
  uid,
} from "./stripe.ts";

describe("POST /api/webhooks/stripe", () => {
  it("credits a paid Checkout Session once, keyed on the session whatever the events", async () => {
    const w = await world();
    const before = await balanceOf(w.orgId);
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 2_500 };
    await startedSession(w.orgId, session);
    const completed = checkoutEvent(w.orgId, "checkout.session.completed", session);
    const first = await deliver(completed);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ received: true, outcome: "applied" });
    // The same event again (Stripe retries) and another event for the same payment.
    expect((await deliver(completed)).body).toEqual({ received: true, outcome: "duplicate" });
    await deliver(checkoutEvent(w.orgId, "checkout.session.async_payment_succeeded", session));
    expect(await balanceOf(w.orgId)).toBe(before + 25_000_000);
    const ledger = await api<{
      items: { kind: string; amountMicros: number; reference: string }[];
    }>("GET", `/api/orgs/${w.orgId}/billing/ledger`, { token: w.owner.token });
    expect(ledger.body.items.filter((e) => e.kind === "topup")).toEqual([
      expect.objectContaining({ amountMicros: 25_000_000, reference: session.id }),
    ]);
  });

  it("turns partial and full refunds into negative adjustments, never refunding twice", async () => {
    const w = await world();
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 5_000 };
    await startedSession(w.orgId, session);
    await deliver(checkoutEvent(w.orgId, "checkout.session.completed", session));
    const funded = await balanceOf(w.orgId);
    const partial = refundEvent(w.orgId, session.paymentIntent, 1_000, 5_000);
    await deliver(partial);
    await deliver(partial);
    expect(await balanceOf(w.orgId)).toBe(funded - 10_000_000);
    // The full refund names no org: it is found from the payment recorded at top-up.
    await deliver(refundEvent(null, session.paymentIntent, 5_000, 5_000));
    expect(await balanceOf(w.orgId)).toBe(funded - 50_000_000);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
  });

  it("refuses a bad signature, a wrong secret and a stale timestamp with 400, crediting nothing", async () => {
    const w = await world();
    const before = await balanceOf(w.orgId);
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 100_000 };
    await startedSession(w.orgId, session);
    const event = checkoutEvent(w.orgId, "checkout.session.completed", session);
    const wrongSecret = await deliver(event, { secret: "whsec_attacker" });
    const stale = await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 3_600 });
    const unsigned = await api("POST", "/api/webhooks/stripe", { body: event });
    const payload = JSON.stringify(event);
    const tampered = await post(payload.replace("100000", "900000"), await sign(payload));
    for (const res of [wrongSecret, stale, unsigned, tampered]) {
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(await balanceOf(w.orgId)).toBe(before);
  });

  it("acknowledges events it does not handle without touching any ledger", async () => {
    const res = await deliver({
      id: uid("evt"),
      object: "event",
      type: "customer.created",
      data: { object: {} },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, outcome: "ignore" });
  });
});

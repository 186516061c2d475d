import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import type { Delivered } from "./global-setup.ts";
import { api, world } from "./helpers.ts";
import {
  balanceOf,
  eventually,
  operatorStripeList,
  paidTopUp,
  replay,
  standinStripe as stripe,
} from "./stripe.ts";

/**
 * A dispute's whole lifecycle, offline (issue 28.8), and a payment's reversals capped at what it
 * paid (issue 28.2). Paid through Parley's Checkout on the Stripe stand-in, disputed through the
 * stand-in's controls, every webhook delivered byte for byte as Stripe signed it; then the
 * balance, the ledger and the payments list are compared, and every event delivered again in
 * the reverse order changes nothing.
 */

type Payment = Record<string, unknown> & { id: string };

async function control(path: string, body: Record<string, unknown> = {}) {
  const res = await fetch(`${env.STRIPE_API_URL}/__standin${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, path).toBe(200);
  return (await res.json()) as { id: string; status: string };
}

async function paymentOf(orgId: string, token: string, paymentIntent: string) {
  const res = await api<{ items: Payment[] }>("GET", `/api/orgs/${orgId}/billing/payments`, {
    token,
  });
  const payment = res.body.items.find((p) => p.id === paymentIntent);
  if (payment === undefined) throw new Error("the payment is not listed");
  return payment;
}

/** What the ledger holds for the payment's refunds and disputes (its reversal entries). */
async function ledgerTaken(orgId: string, paymentIntent: string) {
  const entries = await billingAccount(env, orgId).entries(null, 100);
  return entries
    .filter((e) => e.reference === `stripe:reversals:${paymentIntent}`)
    .reduce((sum, e) => sum - e.amountMicros, 0);
}

/** Delivers each caught event to the Worker; answers each outcome. */
async function deliverAll(deliveries: Delivered[]) {
  const outcomes: string[] = [];
  for (const delivery of deliveries) {
    const res = await replay(delivery);
    expect(res.status).toBe(200);
    outcomes.push(String((res.body as { outcome: string }).outcome));
  }
  return outcomes;
}

describe("a dispute's lifecycle, end to end", () => {
  it("won: created and funds_withdrawn take the disputed amount once, funds_reinstated gives it back; replays change nothing", async () => {
    const w = await world();
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 0 });
    const { paymentIntent, charge } = await paidTopUp(w.orgId, w.admin.token, 25_000_000);
    const paid = await balanceOf(w.orgId);

    const dispute = await control(`/charges/${charge}/dispute`, { amount: 1_000 });
    const opened = [
      await eventually(dispute.id, "charge.dispute.created"),
      await eventually(dispute.id, "charge.dispute.funds_withdrawn"),
    ];
    expect(await deliverAll(opened)).toEqual(["applied", "applied"]);
    expect(await balanceOf(w.orgId)).toBe(paid - 10_000_000);
    expect(await paymentOf(w.orgId, w.admin.token, paymentIntent)).toMatchObject({
      status: "disputed",
      disputedMicros: 10_000_000,
      reversedMicros: 10_000_000,
      refundedMicros: 0,
    });
    expect(await ledgerTaken(w.orgId, paymentIntent)).toBe(10_000_000);

    // Evidence, then the network decides for the merchant.
    await control(`/disputes/${dispute.id}/respond`, { evidence: "The credits were used." });
    expect(await deliverAll([await eventually(dispute.id, "charge.dispute.updated")])).toEqual([
      "ignore",
    ]);
    expect((await control(`/disputes/${dispute.id}/close`, { status: "won" })).status).toBe("won");
    const closed = [
      await eventually(dispute.id, "charge.dispute.closed"),
      await eventually(dispute.id, "charge.dispute.funds_reinstated"),
    ];
    expect(await deliverAll(closed)).toEqual(["ignore", "applied"]);
    expect(await balanceOf(w.orgId)).toBe(paid);
    expect(await paymentOf(w.orgId, w.admin.token, paymentIntent)).toMatchObject({
      status: "paid",
      disputedMicros: 0,
      reversedMicros: 0,
    });
    expect(await ledgerTaken(w.orgId, paymentIntent)).toBe(0);

    // Every event of the dispute again, newest first: nothing moves.
    const all = [...opened, ...closed].reverse();
    expect(await deliverAll(all)).toEqual(["duplicate", "ignore", "duplicate", "duplicate"]);
    expect(await balanceOf(w.orgId)).toBe(paid);
    const entries = await account.entries(null, 100);
    expect(
      entries
        .filter((e) => e.reference === `stripe:reversals:${paymentIntent}`)
        .map((e) => [e.amountMicros, e.memo]),
    ).toEqual([
      [10_000_000, "Stripe dispute reinstated"],
      [-10_000_000, "Stripe dispute"],
    ]);
    expect((await account.reconcile()).ok).toBe(true);
  });

  it("the probe, lost: $5 paid, refunded in full, then disputed for $5 takes $5 in all; the excess is the operator's; replays change nothing", async () => {
    const w = await world();
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 0 });
    const start = await balanceOf(w.orgId);
    const { paymentIntent, charge } = await paidTopUp(w.orgId, w.admin.token, 5_000_000);
    await stripe.refunds.create({ payment_intent: paymentIntent });
    const refunded = await eventually(paymentIntent, "charge.refunded");
    expect(await deliverAll([refunded])).toEqual(["applied"]);
    expect(await balanceOf(w.orgId)).toBe(start);

    const dispute = await control(`/charges/${charge}/dispute`);
    const opened = [
      await eventually(dispute.id, "charge.dispute.created"),
      await eventually(dispute.id, "charge.dispute.funds_withdrawn"),
    ];
    expect(JSON.parse(opened[1]?.body ?? "{}").data.object.amount).toBe(500);
    expect(await deliverAll(opened)).toEqual(["applied", "applied"]);
    // Not -$5: the payment gave $5 of credits, and its refund already took them back.
    expect(await balanceOf(w.orgId)).toBe(start);
    const payment = await paymentOf(w.orgId, w.admin.token, paymentIntent);
    expect(payment).toMatchObject({
      amountMicros: 5_000_000,
      refundedMicros: 5_000_000,
      disputedMicros: 5_000_000,
      reversedMicros: 5_000_000,
      status: "disputed",
    });
    // The payments list and the ledger agree.
    expect(await ledgerTaken(w.orgId, paymentIntent)).toBe(payment.reversedMicros);
    const excess = (await operatorStripeList("excess")).filter(
      (item) => item.paymentIntentId === paymentIntent,
    );
    expect(excess).toEqual([
      {
        paymentIntentId: paymentIntent,
        orgId: w.orgId,
        amountMicros: 5_000_000,
        refundedMicros: 5_000_000,
        disputedMicros: 5_000_000,
        reversedMicros: 5_000_000,
        excessMicros: 5_000_000,
        createdAt: expect.any(String),
      },
    ]);

    expect((await control(`/disputes/${dispute.id}/close`, { status: "lost" })).status).toBe(
      "lost",
    );
    const lost = await eventually(dispute.id, "charge.dispute.closed");
    expect(JSON.parse(lost.body).data.object.status).toBe("lost");
    expect(await deliverAll([lost])).toEqual(["ignore"]);
    // Lost: Stripe never sends funds_reinstated.
    const types = (await eventuallyAll(dispute.id)).map((d) => JSON.parse(d.body).type);
    expect(types).not.toContain("charge.dispute.funds_reinstated");

    // Everything again, in the reverse order: the same end.
    expect(await deliverAll([lost, ...opened, refunded].reverse())).toEqual([
      "duplicate",
      "duplicate",
      "duplicate",
      "ignore",
    ]);
    expect(await balanceOf(w.orgId)).toBe(start);
    expect(await paymentOf(w.orgId, w.admin.token, paymentIntent)).toEqual(payment);
    expect((await account.reconcile()).ok).toBe(true);
  });

  it("won after a full refund: the dispute took nothing from credits, so its reinstatement gives nothing back", async () => {
    const w = await world();
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 0 });
    const start = await balanceOf(w.orgId);
    const { paymentIntent, charge } = await paidTopUp(w.orgId, w.admin.token, 5_000_000);
    await stripe.refunds.create({ payment_intent: paymentIntent });
    const dispute = await control(`/charges/${charge}/dispute`);
    await control(`/disputes/${dispute.id}/close`, { status: "won" });
    const events = [
      await eventually(paymentIntent, "charge.refunded"),
      await eventually(dispute.id, "charge.dispute.created"),
      await eventually(dispute.id, "charge.dispute.funds_withdrawn"),
      await eventually(dispute.id, "charge.dispute.closed"),
      await eventually(dispute.id, "charge.dispute.funds_reinstated"),
    ];
    // Delivered in Stripe's order: after the withdrawal, then after the reinstatement; then each
    // again in the reverse order.
    await deliverAll(events.slice(0, 3));
    expect(await balanceOf(w.orgId)).toBe(start);
    await deliverAll(events.slice(3));
    expect(await balanceOf(w.orgId)).toBe(start);
    await deliverAll([...events].reverse());
    expect(await balanceOf(w.orgId)).toBe(start);
    expect(await paymentOf(w.orgId, w.admin.token, paymentIntent)).toMatchObject({
      refundedMicros: 5_000_000,
      disputedMicros: 0,
      reversedMicros: 5_000_000,
      status: "refunded",
    });
    expect(await ledgerTaken(w.orgId, paymentIntent)).toBe(5_000_000);
    expect(
      (await operatorStripeList("excess")).some((item) => item.paymentIntentId === paymentIntent),
    ).toBe(false);
    expect((await account.reconcile()).ok).toBe(true);
  });
});

/** Every caught delivery mentioning `match`, once the last of them arrived. */
async function eventuallyAll(match: string): Promise<Delivered[]> {
  const all = (await (await fetch(`${env.TEST_MAILBOX_URL}/?path=/stripe`)).json()) as Delivered[];
  return all.filter((d) => d.body.includes(match));
}

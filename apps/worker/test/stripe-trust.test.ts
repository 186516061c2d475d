import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { api, errorCode, world } from "./helpers.ts";
import {
  balanceOf,
  checkoutEvent,
  deliver,
  disputeEvent,
  eventually,
  operatorStripeList,
  paidTopUp,
  refundEvent,
  replay,
  startedSession,
  standinStripe as stripe,
  uid,
} from "./stripe.ts";

/**
 * Credit only what Parley started (issue 28.1): a paid Checkout Session credits only if
 * `POST .../billing/checkout` made it, and only the org that made it; a refund or dispute belongs
 * to the org of the payment Parley recorded. What an event names (client_reference_id, metadata)
 * is anyone's to write. Everything else is acknowledged, credits nothing, and is listed for the
 * operator. The automatic top-up's side is in test/auto-top-up.test.ts.
 */

type Listed = { items: Record<string, unknown>[] };
const payments = async (orgId: string, token: string) =>
  (await api<Listed>("GET", `/api/orgs/${orgId}/billing/payments`, { token })).body.items;

const payOnStandin = (sessionId: string, body: Record<string, unknown> = {}) =>
  fetch(`${env.STRIPE_API_URL}/__standin/checkout/sessions/${sessionId}/pay`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a Checkout Session credits only if Parley made it, for the org that made it", () => {
  it("the probe: a Payment Link's session naming the org in client_reference_id credits nothing and is listed for the operator", async () => {
    const w = await world();
    await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros: 0 });
    const before = await balanceOf(w.orgId);
    // Made at Stripe for something else (a Payment Link for a T-shirt), opened with
    // ?client_reference_id=<org>: the session carries the org, and it is paid.
    const shirt = await stripe.checkout.sessions.create({
      mode: "payment",
      client_reference_id: w.orgId,
      line_items: [
        {
          quantity: 1,
          price_data: { currency: "usd", unit_amount: 1_234, product_data: { name: "T-shirt" } },
        },
      ],
      success_url: "https://shop.example/thanks",
    });
    expect((await payOnStandin(shirt.id)).status).toBe(200);
    const completed = await eventually(shirt.id, "checkout.session.completed");
    expect(JSON.parse(completed.body).data.object).toMatchObject({
      client_reference_id: w.orgId,
      payment_status: "paid",
      amount_total: 1_234,
    });
    for (let i = 0; i < 2; i++) {
      // 2xx: Stripe stops retrying; nothing a retry could change.
      const res = await replay(completed);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, outcome: "unrecognized" });
    }
    expect(await balanceOf(w.orgId)).toBe(before);
    expect(await payments(w.orgId, w.owner.token)).toEqual([]);
    const listed = (await operatorStripeList("unrecognized")).filter(
      (item) => item.objectId === shirt.id,
    );
    expect(listed).toEqual([
      {
        eventId: JSON.parse(completed.body).id,
        type: "checkout.session.completed",
        reason: "checkout_not_started",
        objectId: shirt.id,
        paymentIntentId: expect.stringMatching(/^pi_/),
        claimedOrgId: w.orgId,
        amountMicros: 12_340_000,
        receivedAt: expect.any(String),
        resolvedAt: null,
      },
    ]);
    // Refunded at Stripe later: a payment Parley has no record of; nothing is taken either.
    await stripe.refunds.create({ payment_intent: String(listed[0]?.paymentIntentId) });
    const refunded = await eventually(String(listed[0]?.paymentIntentId), "charge.refunded");
    expect((await replay(refunded)).body).toEqual({ received: true, outcome: "unrecognized" });
    expect(await balanceOf(w.orgId)).toBe(before);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
  });

  it("a delayed payment's success for a session Parley never made credits nothing either", async () => {
    const w = await world();
    const before = await balanceOf(w.orgId);
    const session = await stripe.checkout.sessions.create({
      mode: "payment",
      client_reference_id: w.orgId,
      metadata: { orgId: w.orgId },
      line_items: [
        {
          quantity: 1,
          price_data: { currency: "usd", unit_amount: 5_000, product_data: { name: "Credits?" } },
        },
      ],
      success_url: "https://shop.example/thanks",
    });
    await payOnStandin(session.id, { async: true });
    const succeeded = await eventually(session.id, "checkout.session.async_payment_succeeded");
    expect((await replay(succeeded)).body).toEqual({ received: true, outcome: "unrecognized" });
    expect(await balanceOf(w.orgId)).toBe(before);
  });

  it("credits the org that made the session, whatever org the event names, and no more than it asked", async () => {
    const w = await world();
    const [mine, theirs] = [w.orgId, w.otherOrgId];
    const [mineBefore, theirsBefore] = [await balanceOf(mine), await balanceOf(theirs)];
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 500 };
    await startedSession(mine, session);
    // client_reference_id and metadata both name the other org.
    const event = checkoutEvent(theirs, "checkout.session.completed", session);
    expect((await deliver(event)).body).toEqual({ received: true, outcome: "applied" });
    expect(await balanceOf(mine)).toBe(mineBefore + 5_000_000);
    expect(await balanceOf(theirs)).toBe(theirsBefore);
    // A total above what the session asked (changed at Stripe) credits what was asked, listed.
    const more = { id: uid("cs"), paymentIntent: uid("pi"), cents: 700 };
    await startedSession(mine, { id: more.id, cents: 500 });
    const over = checkoutEvent(mine, "checkout.session.completed", more);
    expect((await deliver(over)).body).toEqual({ received: true, outcome: "applied" });
    expect(await balanceOf(mine)).toBe(mineBefore + 10_000_000);
    expect(
      (await operatorStripeList("unrecognized")).find((item) => item.eventId === over.id),
    ).toMatchObject({ reason: "amount_mismatch", objectId: more.id, amountMicros: 7_000_000 });
  });
});

describe("a refund or dispute belongs to the org of the payment Parley recorded", () => {
  it("takes from the payment's org, never from the org its metadata names", async () => {
    const w = await world();
    const { paymentIntent } = await paidTopUp(w.orgId, w.admin.token, 20_000_000);
    const [mine, theirs] = [await balanceOf(w.orgId), await balanceOf(w.otherOrgId)];
    const refund = refundEvent(w.otherOrgId, paymentIntent, 500, 2_000);
    expect((await deliver(refund)).body).toEqual({ received: true, outcome: "applied" });
    const dispute = disputeEvent(paymentIntent, 1_000);
    (dispute.data.object.metadata as Record<string, string>).orgId = w.otherOrgId;
    expect((await deliver(dispute)).body).toEqual({ received: true, outcome: "applied" });
    expect(await balanceOf(w.orgId)).toBe(mine - 15_000_000);
    expect(await balanceOf(w.otherOrgId)).toBe(theirs);
  });

  it("a dispute that takes the balance under the low-balance threshold alerts at once: the alarm is woken", async () => {
    const w = await world();
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 0 });
    const { paymentIntent } = await paidTopUp(w.orgId, w.admin.token, 20_000_000);
    const url = `${env.TEST_MAILBOX_URL}/alerts/${w.orgId}`;
    await account.updateSettings(w.orgId, { lowBalanceMicros: 10_000_000, alertWebhookUrl: url });
    // Nothing else is pending: no spend, no hold, no grant to expire.
    await runInDurableObject(account, (_instance, state) => state.storage.deleteAlarm());
    expect((await deliver(disputeEvent(paymentIntent, 1_500))).body).toMatchObject({
      outcome: "applied",
    });
    const delivered = async () =>
      (
        (await (await fetch(`${env.TEST_MAILBOX_URL}/?path=/alerts/${w.orgId}`)).json()) as {
          body: string;
        }[]
      ).map((d) => JSON.parse(d.body).alert.kind as string);
    for (let i = 0; i < 150 && (await delivered()).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await delivered()).toEqual(["low_balance"]);
  });

  it("one of a payment not recorded yet is held, listed, and applied when the payment comes", async () => {
    const w = await world();
    const before = await balanceOf(w.orgId);
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 2_500 };
    await startedSession(w.orgId, session);
    const refund = refundEvent(null, session.paymentIntent, 1_000, 2_500);
    expect((await deliver(refund)).body).toEqual({ received: true, outcome: "unrecognized" });
    const held = () =>
      operatorStripeList("unrecognized").then((items) =>
        items.find((item) => item.eventId === refund.id),
      );
    expect(await held()).toMatchObject({ reason: "unknown_payment", resolvedAt: null });
    expect(await balanceOf(w.orgId)).toBe(before);
    const completed = checkoutEvent(w.orgId, "checkout.session.completed", session);
    expect((await deliver(completed)).body).toEqual({ received: true, outcome: "applied" });
    expect(await balanceOf(w.orgId)).toBe(before + 15_000_000);
    expect(await held()).toMatchObject({ resolvedAt: expect.any(String) });
    // Redelivered, either of them: nothing more.
    expect((await deliver(refund)).body).toEqual({ received: true, outcome: "duplicate" });
    expect((await deliver(completed)).body).toEqual({ received: true, outcome: "duplicate" });
    expect(await balanceOf(w.orgId)).toBe(before + 15_000_000);
    expect((await payments(w.orgId, w.owner.token))[0]).toMatchObject({
      refundedMicros: 10_000_000,
      reversedMicros: 10_000_000,
      status: "partially_refunded",
    });
  });

  it("a refund of a charge without a PaymentIntent is never one of Parley's: acknowledged and listed", async () => {
    const refund = refundEvent(null, "", 500, 500);
    (refund.data.object as { payment_intent: string | null }).payment_intent = null;
    expect((await deliver(refund)).body).toEqual({ received: true, outcome: "unrecognized" });
    expect(
      (await operatorStripeList("unrecognized")).find((item) => item.eventId === refund.id),
    ).toMatchObject({ reason: "no_payment_intent", paymentIntentId: null });
  });
});

describe("an automatic top-up's webhook before Stripe's answer reached the account", () => {
  it("is asked to come back (409) while the charge waits for its intent, then credited once; another intent under the key is not", async () => {
    const w = await world();
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 0 });
    const before = await balanceOf(w.orgId);
    // A charge the account recorded and asked Stripe for, whose answer (the intent's id) has not
    // come back yet: Stripe sends payment_intent.succeeded while it is still answering.
    await runInDurableObject(account, (_instance, state) => {
      state.storage.sql.exec(
        `INSERT INTO auto_top_up_charges (key, amount_micros, status, attempts, created_at, updated_at)
         VALUES ('auto-topup-1', 2000000, 'requested', 1, ?, ?)`,
        Date.now(),
        Date.now(),
      );
    });
    const intent = (id: string) => ({
      id: uid("evt"),
      object: "event",
      type: "payment_intent.succeeded",
      data: {
        object: {
          id,
          object: "payment_intent",
          amount: 200,
          amount_received: 200,
          currency: "usd",
          status: "succeeded",
          metadata: { orgId: w.orgId, autoTopUp: "auto-topup-1" },
        },
      },
    });
    const real = intent(uid("pi"));
    const early = await deliver(real);
    expect(early.status).toBe(409);
    expect(errorCode(early)).toBe("conflict");
    expect(await balanceOf(w.orgId)).toBe(before);
    // Stripe's answer reaches the alarm: the charge notes its intent.
    await runInDurableObject(account, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE auto_top_up_charges SET payment_intent_id = ? WHERE key = 'auto-topup-1'",
        real.data.object.id,
      );
    });
    expect((await deliver(real)).body).toEqual({ received: true, outcome: "applied" });
    expect((await deliver(real)).body).toEqual({ received: true, outcome: "duplicate" });
    expect((await deliver(intent(uid("pi")))).body).toEqual({
      received: true,
      outcome: "unrecognized",
    });
    expect(await balanceOf(w.orgId)).toBe(before + 2_000_000);
    expect((await payments(w.orgId, w.owner.token)).map((p) => [p.id, p.source])).toEqual([
      [real.data.object.id, "auto_top_up"],
    ]);
  });
});

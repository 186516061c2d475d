import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { addMembership, api, errorCode, person, snapshot, world } from "./helpers.ts";
import { mailArrived, mailTo, nextMail } from "./mail.ts";
import { checkoutEvent, deliver, startedSession, uid } from "./stripe.ts";

/**
 * Owners' billing mail (docs/2026-12-06-mail.md): receipts of credited top-ups and limit alerts,
 * for owners who opt in per org (`GET/PATCH /api/me/notifications`).
 */

const optIn = (token: string, orgId: string, body: Record<string, unknown>) =>
  api("PATCH", `/api/me/notifications/${orgId}`, { token, body });

describe("billing mail preferences", () => {
  it("are off by default, owners switch them on per org, others are refused and nothing changes", async () => {
    const w = await world();
    const listed = await api<{ items: unknown[] }>("GET", "/api/me/notifications", {
      token: w.owner.token,
    });
    expect(listed.body.items).toEqual([
      {
        orgId: w.orgId,
        orgName: "Acme",
        role: "owner",
        receipts: false,
        limitAlerts: false,
        available: true,
      },
    ]);
    const on = await optIn(w.owner.token, w.orgId, { receipts: true });
    expect(on.body).toMatchObject({ receipts: true, limitAlerts: false });
    expect((await optIn(w.owner.token, w.orgId, { limitAlerts: true })).body).toMatchObject({
      receipts: true,
      limitAlerts: true,
    });
    const before = await snapshot();
    const refused = [
      await optIn(w.admin.token, w.orgId, { receipts: true }),
      await optIn(w.outsider.token, w.orgId, { receipts: true }),
      await optIn(w.owner.token, w.orgId, {}),
      await optIn(w.owner.token, w.orgId, { receipts: "yes" }),
      await optIn(w.owner.token, w.orgId, { receipts: true, extra: 1 }),
    ];
    expect(refused.map((r) => [r.status, errorCode(r)])).toEqual([
      [403, "forbidden"],
      [404, "not_found"],
      [400, "invalid_request"],
      [400, "invalid_request"],
      [400, "invalid_request"],
    ]);
    expect(await snapshot()).toEqual(before);
    // A member sees the org, not switchable.
    const member = await api<{ items: { available: boolean; receipts: boolean }[] }>(
      "GET",
      "/api/me/notifications",
      { token: w.member.token },
    );
    expect(member.body.items).toEqual([
      expect.objectContaining({ available: false, receipts: false }),
    ]);
  });
});

describe("receipts by mail", () => {
  it("go to opted-in owners once per credited top-up, however often Stripe delivers it", async () => {
    const w = await world();
    const second = await person("second-owner");
    await addMembership(w.orgId, second.id, "owner");
    await optIn(w.owner.token, w.orgId, { receipts: true });
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 2_500 };
    // Parley credits only Checkout Sessions it started (billing/stripe-webhook.ts).
    await startedSession(w.orgId, session);
    const event = checkoutEvent(w.orgId, "checkout.session.completed", session);
    expect((await deliver(event)).body).toMatchObject({ outcome: "applied" });
    expect((await deliver(event)).body).toMatchObject({ outcome: "duplicate" });
    await deliver(checkoutEvent(w.orgId, "checkout.session.async_payment_succeeded", session));
    const receipt = await nextMail(w.owner.email, "receipt");
    expect(receipt.subject).toBe("Receipt: $25.00 of credits for Acme");
    expect(receipt.links).toContain("https://parley.test/billing");
    // A paid session Parley did not start credits nothing, so it has no receipt either.
    const forged = { id: uid("cs"), paymentIntent: uid("pi"), cents: 9_900 };
    const unrecognized = await deliver(
      checkoutEvent(w.orgId, "checkout.session.completed", forged),
    );
    expect(unrecognized.body).toMatchObject({ outcome: "unrecognized" });
    expect(await mailArrived(w.owner.email, "receipt", receipt.id, 1_000)).toBe(false);
    expect(await mailTo(w.owner.email, { kind: "receipt" })).toHaveLength(1);
    // Owners who did not opt in, and members, get none.
    expect(await mailArrived(second.email, "receipt", "0", 300)).toBe(false);
    expect(await mailArrived(w.admin.email, "receipt", "0", 300)).toBe(false);
  });
});

describe("limit alerts by mail", () => {
  it("go to opted-in owners when an alert fires, and not to an owner since demoted", async () => {
    const w = await world();
    const demoted = await person("demoted-owner");
    await addMembership(w.orgId, demoted.id, "owner");
    await optIn(w.owner.token, w.orgId, { limitAlerts: true });
    await optIn(demoted.token, w.orgId, { limitAlerts: true });
    const demote = await api("PATCH", `/api/orgs/${w.orgId}/members/${demoted.id}`, {
      token: w.owner.token,
      body: { role: "admin" },
    });
    expect(demote.status).toBe(200);
    // $10 of credits and a $9.50 low-balance threshold; one call of $0.90 crosses it.
    const account = billingAccount(env, w.orgId);
    await account.open({ orgId: w.orgId, grantMicros: 10_000_000 });
    await account.updateSettings(w.orgId, { lowBalanceMicros: 9_500_000 });
    await account.reserve({
      requestId: "mail-alert",
      amountMicros: 900_000,
      memberId: w.member.id,
      projectId: w.projectId,
      sessionId: w.sessionId,
    });
    await account.settle({
      requestId: "mail-alert",
      costMicros: 800_000,
      priceMicros: 900_000,
      tokens: {
        promptTokens: 100,
        completionTokens: 50,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      model: "m/one",
      generationIds: [],
      billable: true,
    });
    const alert = await nextMail(w.owner.email, "limit_alert");
    expect(alert.subject).toBe("Billing alert for Acme");
    expect(alert.text).toContain("below the low-balance threshold of $9.50");
    expect(await mailArrived(demoted.email, "limit_alert", "0", 500)).toBe(false);
  });
});

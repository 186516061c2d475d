import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type {
  AllowanceResult,
  BillingSummary,
  LedgerEntry,
  OperatorGrantResult,
  Page,
} from "@parley/shared";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import type { BillingAccount } from "../src/billing/billing-account.ts";
import { api, errorCode, snapshot } from "./helpers.ts";
import { funded } from "./metering.ts";

/** The operator's secret, as vitest.config.ts binds it. */
const SECRET = (env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? "";
const OPERATOR = { authorization: `Bearer ${SECRET}` };
const DAY = 86_400_000;

const tokens = { promptTokens: 1, completionTokens: 1, cachedPromptTokens: 0, reasoningTokens: 0 };

let calls = 0;
/** One billable call of `price` through the account's reserve and settle. */
async function spend(orgId: string, price: number): Promise<void> {
  const stub = billingAccount(env, orgId);
  const requestId = `grants-call-${calls++}`;
  const reserved = await stub.reserve({
    requestId,
    amountMicros: price,
    memberId: "usr_a",
    projectId: null,
    sessionId: null,
  });
  expect(reserved.ok).toBe(true);
  const settled = await stub.settle({
    requestId,
    costMicros: 0,
    priceMicros: price,
    tokens,
    model: "m",
    generationIds: [],
    billable: true,
  });
  expect(settled.ok).toBe(true);
}

function grant(orgId: string, body: Record<string, unknown>, headers = OPERATOR) {
  return api<OperatorGrantResult>("POST", `/api/operator/orgs/${orgId}/grants`, { body, headers });
}

/** Moves a grant's expiry into the past, as time passing would (the alarm reads the clock). */
async function dueNow(orgId: string, grantId: string, at = Date.now() - 1): Promise<void> {
  await runInDurableObject(billingAccount(env, orgId), (_i: BillingAccount, state) => {
    state.storage.sql.exec("UPDATE ledger_lots SET expires_at = ? WHERE id = ?", at, grantId);
  });
}

async function expiryEntries(orgId: string) {
  const entries = await billingAccount(env, orgId).entries(null, 100);
  return entries.filter((entry) => entry.grantEvent === "expired");
}

describe("credit grants", () => {
  it("a promotion with an expiry is drawn first; the alarm expires what is left exactly once", async () => {
    const w = await funded(1_000_000);
    const expiresAt = new Date(Date.now() + 30 * DAY).toISOString();
    const created = await grant(w.orgId, {
      amountMicros: 500_000,
      expiresAt,
      priority: 10,
      idempotencyKey: "promo-dec",
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      orgId: w.orgId,
      replayed: false,
      grant: { source: "promotion", grantedMicros: 500_000, remainingMicros: 500_000, expiresAt },
    });
    const grantId = created.body.grant.id;
    // The same key and terms answer the same grant; other terms are a conflict.
    const again = await grant(w.orgId, {
      amountMicros: 500_000,
      expiresAt,
      priority: 10,
      idempotencyKey: "promo-dec",
    });
    expect(again.body).toMatchObject({ replayed: true, grant: { id: grantId } });
    const other = await grant(w.orgId, { amountMicros: 600_000, idempotencyKey: "promo-dec" });
    expect(other.status).toBe(409);
    expect(errorCode(other)).toBe("conflict");

    await spend(w.orgId, 200_000);
    const billing = await api<BillingSummary>("GET", `/api/orgs/${w.orgId}/billing`, {
      token: w.member.token,
    });
    expect(billing.status).toBe(200);
    expect(billing.body.postedMicros).toBe(1_300_000);
    expect(billing.body.grants.map((g) => [g.source, g.remainingMicros])).toEqual([
      ["promotion", 300_000],
      ["signup", 1_000_000],
    ]);

    // The usage CSV names the grant that paid for the call.
    const csv = await api<string>("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, {
      token: w.owner.token,
    });
    // Read by the header's name: columns are only ever added at the end (model_label, 2026-12-06).
    const [header = "", row = ""] = csv.body.trim().split("\n");
    const grants = header.split(",").indexOf("grants");
    expect(row.split(",")[grants]).toBe(`${grantId}:promotion:200000`);

    await dueNow(w.orgId, grantId);
    const stub = billingAccount(env, w.orgId);
    await runDurableObjectAlarm(stub);
    await runDurableObjectAlarm(stub);
    // A reset object, its alarm run again: still one expiry.
    await runInDurableObject(stub, (_i: BillingAccount, state) => state.abort("test: reset")).catch(
      () => undefined,
    );
    await dueNow(w.orgId, grantId);
    await runDurableObjectAlarm(billingAccount(env, w.orgId));
    const expiries = await expiryEntries(w.orgId);
    expect(expiries).toHaveLength(1);
    expect(expiries[0]).toMatchObject({
      amountMicros: -300_000,
      grantId,
      grantSource: "promotion",
    });
    const after = await billingAccount(env, w.orgId).summary();
    expect(after.postedMicros).toBe(1_000_000);
    expect(after.grants.map((g) => [g.source, g.remainingMicros])).toEqual([["signup", 1_000_000]]);
    expect((await billingAccount(env, w.orgId).reconcile()).problems).toEqual([]);

    // The ledger page labels both ends of the grant.
    const ledger = await api<Page<LedgerEntry>>("GET", `/api/orgs/${w.orgId}/billing/ledger`, {
      token: w.owner.token,
    });
    const events = ledger.body.items
      .filter((e) => e.grantId === grantId)
      .map((e) => [e.grantEvent, e.amountMicros]);
    expect(events).toEqual([
      ["expired", -300_000],
      ["granted", 500_000],
    ]);
  });

  it("the monthly allowance posts once per period and renews at the boundary", async () => {
    const w = await funded(0);
    const set = await api<AllowanceResult>("PUT", `/api/operator/orgs/${w.orgId}/allowance`, {
      body: { amountMicros: 2_000_000, billingDay: 1 },
      headers: OPERATOR,
    });
    expect(set.status).toBe(200);
    const next = new Date();
    const boundary = Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 1);
    expect(set.body).toMatchObject({
      amountMicros: 2_000_000,
      billingDay: 1,
      nextRenewalAt: new Date(boundary).toISOString(),
    });
    // Setting it again, and the alarm running, post nothing more in the same period.
    await api("PUT", `/api/operator/orgs/${w.orgId}/allowance`, {
      body: { amountMicros: 2_000_000, billingDay: 1 },
      headers: OPERATOR,
    });
    const stub = billingAccount(env, w.orgId);
    await runDurableObjectAlarm(stub);
    const summary = await stub.summary();
    expect(summary.postedMicros).toBe(2_000_000);
    expect(summary.grants).toMatchObject([
      {
        source: "monthly_allowance",
        remainingMicros: 2_000_000,
        expiresAt: new Date(boundary).toISOString(),
      },
    ]);
    await spend(w.orgId, 500_000);

    // The boundary, as the account sees it: its period's grant is due, and the clock is moved
    // back a month (the period of the grant already posted is the previous one).
    await runInDurableObject(stub, (_i: BillingAccount, state) => {
      state.storage.sql.exec("UPDATE ledger_lots SET expires_at = ?", Date.now() - 1);
      state.storage.sql.exec(
        "UPDATE ledger_entries SET idempotency_key = 'allowance:1999-01-01' WHERE idempotency_key LIKE 'allowance:%'",
      );
    });
    await runDurableObjectAlarm(stub);
    await runDurableObjectAlarm(stub);
    const entries = await stub.entries(null, 100);
    const allowances = entries.filter((e) => e.grantSource === "monthly_allowance");
    // One grant per period (the old one and the renewal), one expiry of what the old one had left.
    expect(allowances.map((e) => [e.grantEvent, e.amountMicros])).toEqual([
      ["granted", 2_000_000],
      ["expired", -1_500_000],
      ["granted", 2_000_000],
    ]);
    expect((await stub.summary()).postedMicros).toBe(2_000_000);
    expect((await stub.reconcile()).problems).toEqual([]);
  });

  it("refuses a missing or wrong operator secret (401), an unknown org (404) and bad input (400), changing nothing", async () => {
    const w = await funded(0);
    const before = await snapshot();
    const body = { amountMicros: 1_000_000, idempotencyKey: "k1" };
    for (const headers of [
      {} as Record<string, string>,
      { authorization: "Bearer wrong" },
      { authorization: `Bearer ${SECRET}x` },
      { authorization: `Bearer ${w.owner.token}` },
      { authorization: `${SECRET}` },
    ]) {
      const refused = await grant(w.orgId, body, headers as typeof OPERATOR);
      expect(refused.status).toBe(401);
      expect(errorCode(refused)).toBe("unauthorized");
      const allowance = await api("PUT", `/api/operator/orgs/${w.orgId}/allowance`, {
        body: { amountMicros: 1, billingDay: 1 },
        headers,
      });
      expect(allowance.status).toBe(401);
    }
    const unknown = await grant("org_nope", body);
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe("not_found");
    for (const bad of [
      { amountMicros: 0, idempotencyKey: "k" },
      { amountMicros: 1.5, idempotencyKey: "k" },
      { amountMicros: 1, idempotencyKey: "" },
      { amountMicros: 1, idempotencyKey: "k", priority: 101 },
      { amountMicros: 1, idempotencyKey: "k", expiresAt: "tomorrow" },
      {
        amountMicros: 1,
        idempotencyKey: "k",
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      },
      { amountMicros: 1, idempotencyKey: "k", source: "top_up" },
      { amountMicros: 1 },
    ]) {
      const refused = await grant(w.orgId, bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(errorCode(refused)).toBe("invalid_request");
    }
    for (const bad of [
      { amountMicros: 1, billingDay: 29 },
      { amountMicros: -1, billingDay: 1 },
      { amountMicros: 1 },
    ]) {
      const refused = await api("PUT", `/api/operator/orgs/${w.orgId}/allowance`, {
        body: bad,
        headers: OPERATOR,
      });
      expect(refused.status).toBe(400);
    }
    expect(await snapshot()).toEqual(before);
    expect((await billingAccount(env, w.orgId).balance()).postedMicros).toBe(0);
  });

  it("owners and admins cannot grant their org credits: the operator routes take no member token", async () => {
    const w = await funded(0);
    for (const token of [w.owner.token, w.admin.token]) {
      const refused = await api("POST", `/api/operator/orgs/${w.orgId}/grants`, {
        token,
        body: { amountMicros: 1_000_000, idempotencyKey: "self-serve" },
      });
      expect(refused.status).toBe(401);
      // Nor is there a member route for it.
      const member = await api("POST", `/api/orgs/${w.orgId}/billing/grants`, {
        token,
        body: { amountMicros: 1_000_000 },
      });
      expect(member.status).toBe(404);
    }
    expect((await billingAccount(env, w.orgId).balance()).postedMicros).toBe(0);
  });
});

import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { type BillingAccount, usageGroups } from "../src/billing/billing-account.ts";

let n = 0;
/** A fresh org's account with `grantMicros` of credit. */
async function account(grantMicros: number) {
  const orgId = `org_test_${Date.now().toString(36)}_${n++}`;
  const stub = billingAccount(env, orgId);
  await stub.open({ orgId, grantMicros });
  return { orgId, stub };
}

const tokens = {
  promptTokens: 10,
  completionTokens: 20,
  cachedPromptTokens: 0,
  reasoningTokens: 0,
};
const reserve = (requestId: string, amountMicros: number, memberId = "usr_a") => ({
  requestId,
  amountMicros,
  memberId,
  projectId: "prj_1",
  sessionId: "ses_1",
});
const settle = (requestId: string, costMicros: number, priceMicros: number, model = "m/one") => ({
  requestId,
  costMicros,
  priceMicros,
  tokens,
  model,
  generationIds: [`gen-${requestId}`],
  billable: true,
});

describe("BillingAccount", () => {
  it("posts the sign-up grant once, however often the account is opened", async () => {
    const { orgId, stub } = await account(5_000_000);
    await stub.open({ orgId, grantMicros: 5_000_000 });
    await stub.open({ orgId, grantMicros: 5_000_000 });
    expect(await stub.balance()).toMatchObject({
      postedMicros: 5_000_000,
      heldMicros: 0,
      availableMicros: 5_000_000,
    });
    expect(await stub.entries(null, 10)).toHaveLength(1);
  });

  it("admits exactly the reservations the balance covers when 25 race for it", async () => {
    const { stub } = await account(10_000);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => stub.reserve(reserve(`race-${i}`, 1_000))),
    );
    const admitted = results.filter((r) => r.ok);
    expect(admitted).toHaveLength(10);
    expect(
      results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === "insufficient_credits"),
    ).toBe(true);
    expect(await stub.balance()).toMatchObject({
      availableMicros: 0,
      heldMicros: 10_000,
      postedMicros: 10_000,
    });
    expect((await stub.reconcile()).ok).toBe(true);
  });

  it("charges a settle replayed any number of times exactly once", async () => {
    const { stub } = await account(100_000);
    expect((await stub.reserve(reserve("once", 5_000))).ok).toBe(true);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => stub.settle(settle("once", 3_000, 3_600))),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && !r.replayed)).toHaveLength(1);
    expect(await stub.balance()).toMatchObject({
      postedMicros: 96_400,
      heldMicros: 0,
      availableMicros: 96_400,
    });
    const usage = await stub.entries(null, 10);
    expect(usage.filter((e) => e.kind === "usage")).toEqual([
      expect.objectContaining({ amountMicros: -3_600 }),
    ]);
    expect((await stub.reconcile()).ok).toBe(true);
  });

  it("settles above the hold to the real cost: the overdraft is bounded by the overrun", async () => {
    const { stub } = await account(1_000);
    expect((await stub.reserve(reserve("over", 1_000))).ok).toBe(true);
    const result = await stub.settle(settle("over", 1_200, 1_300));
    expect(result).toMatchObject({ ok: true, overrunMicros: 300 });
    expect(await stub.balance()).toMatchObject({ availableMicros: -300 });
    // Nothing more is admitted while the balance is negative.
    expect(await stub.reserve(reserve("after", 1))).toMatchObject({
      ok: false,
      reason: "insufficient_credits",
    });
  });

  it("voids an expired hold from its alarm, giving the credits back", async () => {
    const { stub } = await account(10_000);
    expect((await stub.reserve({ ...reserve("stale", 4_000), ttlMs: 20 })).ok).toBe(true);
    expect(await stub.balance()).toMatchObject({ availableMicros: 6_000, heldMicros: 4_000 });
    await new Promise((r) => setTimeout(r, 40));
    // The alarm may already have fired by itself; if not, run it now. Only the alarm voids holds.
    await runDurableObjectAlarm(stub);
    expect(await stub.balance()).toMatchObject({ availableMicros: 10_000, heldMicros: 0 });
    // The provider did charge: a late settle still posts, without a hold.
    expect(await stub.settle(settle("stale", 900, 1_000))).toMatchObject({
      ok: true,
      outcome: "settled_late",
    });
    expect(await stub.balance()).toMatchObject({ availableMicros: 9_000 });
  });

  it("refuses a reservation over the member's daily limit with spend_limit", async () => {
    const { orgId, stub } = await account(1_000_000);
    await stub.updateSettings(orgId, { memberDailyLimitMicros: 10_000 });
    expect((await stub.reserve(reserve("d1", 8_000, "usr_b"))).ok).toBe(true);
    expect(await stub.reserve(reserve("d2", 8_000, "usr_b"))).toMatchObject({
      ok: false,
      reason: "spend_limit",
      limit: "member_daily",
    });
    // Another member is not affected by usr_b's limit.
    expect((await stub.reserve(reserve("d3", 8_000, "usr_c"))).ok).toBe(true);
    const alerts = await stub.alerts();
    // 80% in one step fires the 80% alert only (not 50% as well); the refusal fires 100%.
    expect(
      alerts
        .filter((a) => a.memberId === "usr_b")
        .map((a) => [a.kind, a.thresholdPct, a.memberId])
        .sort(),
    ).toEqual([
      ["member_daily_spend", 100, "usr_b"],
      ["member_daily_spend", 80, "usr_b"],
    ]);
  });

  it("groups usage by model and member, and pages raw rows in time order", async () => {
    const { stub } = await account(1_000_000);
    const plan = [
      ["u1", "usr_a", "m/one", 100, 150],
      ["u2", "usr_a", "m/two", 200, 250],
      ["u3", "usr_b", "m/one", 300, 350],
    ] as const;
    for (const [id, member, model, cost, price] of plan) {
      await stub.reserve(reserve(id, 1_000, member));
      await stub.settle(settle(id, cost, price, model));
    }
    const now = Date.now();
    const byModel = usageGroups(
      await stub.usage({ from: now - 60_000, to: now + 1, groupBy: "model" }),
    );
    expect(byModel.map((g) => [g.key, g.requests, g.costMicros, g.priceMicros])).toEqual([
      ["m/one", 2, 400, 500],
      ["m/two", 1, 200, 250],
    ]);
    const mine = usageGroups(
      await stub.usage({
        from: now - 60_000,
        to: now + 1,
        groupBy: "member",
        memberId: "usr_b",
      }),
    );
    expect(mine.map((g) => [g.key, g.priceMicros])).toEqual([["usr_b", 350]]);
    const first = await stub.usageRows({ from: now - 60_000, to: now + 1, limit: 2 });
    const last = first.at(-1);
    expect(first).toHaveLength(2);
    const rest = await stub.usageRows({
      from: now - 60_000,
      to: now + 1,
      limit: 2,
      after: { createdAt: last?.createdAt ?? 0, requestId: last?.requestId ?? "" },
    });
    expect([...first, ...rest].map((r) => r.requestId).sort()).toEqual(["u1", "u2", "u3"]);
  });

  it("keeps every mutation in one transaction: a failing operation leaves no partial write", async () => {
    const { stub } = await account(10_000);
    expect((await stub.reserve(reserve("bad", 1_000))).ok).toBe(true);
    // Called inside the object so the RangeError is caught here, not reported as unhandled by RPC.
    const thrown = await runInDurableObject(stub, async (instance) => {
      try {
        await (instance as unknown as BillingAccount).settle(settle("bad", -5, 0));
        return null;
      } catch (error) {
        return String(error);
      }
    });
    expect(thrown).toContain("RangeError");
    expect((await stub.reconcile()).ok).toBe(true);
    expect(await stub.balance()).toMatchObject({ availableMicros: 9_000, heldMicros: 1_000 });
  });
});

describe("threshold alerts", () => {
  it("are delivered once each to the org's webhook, signed, by the alarm", async () => {
    const { orgId, stub } = await account(1_000_000);
    const url = `${env.TEST_MAILBOX_URL}/alerts/${orgId}`;
    await stub.updateSettings(orgId, { orgMonthlyLimitMicros: 100_000, alertWebhookUrl: url });
    expect((await stub.reserve(reserve("a1", 60_000))).ok).toBe(true);
    expect((await stub.reserve(reserve("a2", 30_000))).ok).toBe(true);
    // Running the alarm again must not deliver anything twice.
    await runDurableObjectAlarm(stub);
    await runDurableObjectAlarm(stub);
    type Delivery = { headers: Record<string, string>; body: string };
    const mailbox = async () =>
      (await (await fetch(`${env.TEST_MAILBOX_URL}/?path=/alerts/${orgId}`)).json()) as Delivery[];
    // The alarm that fired by itself may still be delivering: wait for both, then a little more
    // so a duplicate would have time to arrive.
    for (let i = 0; i < 100 && (await mailbox()).length < 2; i++)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    const received = await mailbox();
    const alerts = received.map(
      (d) => JSON.parse(d.body) as { orgId: string; alert: { thresholdPct: number } },
    );
    expect(alerts.map((a) => a.alert.thresholdPct).sort()).toEqual([50, 80]);
    expect(alerts.every((a) => a.orgId === orgId)).toBe(true);
    for (const delivery of received) {
      const [t, v1] = (delivery.headers["parley-signature"] ?? "")
        .split(",")
        .map((p) => p.split("=")[1]);
      const key = await crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(env.ALERT_WEBHOOK_SECRET),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["verify"],
      );
      const mac = Uint8Array.from((v1 ?? "").match(/../g) ?? [], (h) => Number.parseInt(h, 16));
      expect(
        await crypto.subtle.verify(
          "HMAC",
          key,
          mac,
          new TextEncoder().encode(`${t}.${delivery.body}`),
        ),
      ).toBe(true);
    }
    const listed = await stub.alerts();
    expect(listed.filter((a) => a.deliveredAt !== null)).toHaveLength(2);
  });
});

describe("the balance forecast", () => {
  it("reads the last 7 days' spend, and fires its alert to the webhook once per funding", async () => {
    const { orgId, stub } = await account(10_000_000);
    expect((await stub.summary()).forecast).toMatchObject({ spentMicros: 0, daysLeft: null });
    const url = `${env.TEST_MAILBOX_URL}/alerts/${orgId}`;
    await stub.updateSettings(orgId, { runwayAlertDays: 30, alertWebhookUrl: url });
    expect((await stub.reserve(reserve("f1", 800_000))).ok).toBe(true);
    expect((await stub.settle(settle("f1", 500_000, 700_000))).ok).toBe(true);
    // $0.70 over 7 days is $0.10 a day: $9.30 lasts 93 days, over 30: no alert.
    expect((await stub.summary()).forecast).toMatchObject({
      spentMicros: 700_000,
      dailyRateMicros: 100_000,
      daysLeft: 93,
    });
    expect((await stub.alerts()).filter((a) => a.kind === "low_runway")).toEqual([]);
    // $2.80 more: $0.50 a day, $6.50 lasts 13 days: under 30, fired once.
    for (const id of ["f2", "f3"]) {
      expect((await stub.reserve(reserve(id, 2_000_000))).ok).toBe(true);
      expect((await stub.settle(settle(id, 1_000_000, 1_400_000))).ok).toBe(true);
    }
    expect((await stub.summary()).forecast.daysLeft).toBe(13);
    const runway = (await stub.alerts()).filter((a) => a.kind === "low_runway");
    expect(runway).toHaveLength(1);
    await runDurableObjectAlarm(stub);
    const mailbox = async () =>
      (await (await fetch(`${env.TEST_MAILBOX_URL}/?path=/alerts/${orgId}`)).json()) as {
        body: string;
      }[];
    for (let i = 0; i < 100 && (await mailbox()).length < 1; i++)
      await new Promise((r) => setTimeout(r, 20));
    const delivered = (await mailbox()).map((d) => JSON.parse(d.body).alert);
    expect(delivered.map((alert) => alert.kind)).toEqual(["low_runway"]);
    expect(delivered[0].message).toContain("lasts less than 30 days");
  });
});

describe("usage groupings", () => {
  it("read whole days from the rollup and edge days from the events, matching a plain sum exactly", async () => {
    const { stub } = await account(0);
    const day = 86_400_000;
    const base = Math.floor(Date.now() / day) * day - 10 * day;
    // 400 events over 10 days at pseudo-random times, some without a member or session.
    await runInDurableObject(stub, (_instance, state) => {
      let seed = 7;
      const next = () => {
        seed = (seed * 48271) % 2147483647;
        return seed;
      };
      for (let i = 0; i < 400; i++) {
        state.storage.sql.exec(
          `INSERT INTO usage_events (request_id, member_id, project_id, session_id, model, prompt_tokens, completion_tokens,
             cached_prompt_tokens, reasoning_tokens, cost_micros, price_micros, billable, generation_ids, outcome, hold_micros, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, '[]', 'settled', NULL, ?)`,
          `r${i}`,
          i % 7 === 0 ? null : `usr_${next() % 5}`,
          `prj_${next() % 3}`,
          i % 11 === 0 ? null : `ses_${next() % 9}`,
          `m/${next() % 4}`,
          next() % 1000,
          next() % 500,
          next() % 3000,
          next() % 4000,
          i % 5 === 0 ? 0 : 1,
          base + (next() % (10 * day)),
        );
      }
    });
    const windows = [
      [base, base + 10 * day],
      [base + 3_600_000, base + 7 * day + 1234],
      [base + 2 * day + 5, base + 2 * day + 20_000_000],
      [base - day, base + 20 * day],
    ] as const;
    for (const [from, to] of windows) {
      for (const groupBy of ["day", "model", "member", "project", "session"] as const) {
        for (const memberId of [undefined, "usr_1"]) {
          const got = usageGroups(
            await stub.usage({ from, to, groupBy, ...(memberId ? { memberId } : {}) }),
          );
          const expected = await runInDurableObject(stub, (_instance, state) => {
            const key = {
              day: "created_at / 86400000",
              model: "model",
              member: "member_id",
              project: "project_id",
              session: "session_id",
            }[groupBy];
            return state.storage.sql
              .exec(
                `SELECT ${key} AS key, COUNT(*) AS requests, SUM(cost_micros) AS costMicros, SUM(price_micros) AS priceMicros,
                   SUM(prompt_tokens) AS promptTokens, SUM(billable) AS billableRequests
                 FROM usage_events WHERE created_at >= ? AND created_at < ? ${memberId ? "AND member_id = ?" : ""}
                 GROUP BY 1 ORDER BY 1`,
                from,
                to,
                ...(memberId ? [memberId] : []),
              )
              .toArray()
              .map((row) => ({
                ...row,
                key:
                  groupBy === "day"
                    ? new Date((row.key as number) * day).toISOString().slice(0, 10)
                    : row.key,
              }));
          });
          expect(
            got.map((g) => ({
              key: g.key,
              requests: g.requests,
              costMicros: g.costMicros,
              priceMicros: g.priceMicros,
              promptTokens: g.promptTokens,
              billableRequests: g.billableRequests,
            })),
            `${groupBy} ${memberId ?? "all"} [${from - base}, ${to - base})`,
          ).toEqual(expected);
        }
      }
    }
  });
});

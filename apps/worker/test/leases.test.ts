import { env, runInDurableObject } from "cloudflare:test";
import { devReply } from "@parley/dev-model/reply";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { billingAccount } from "../src/billing/account.ts";
import type { BillingAccount } from "../src/billing/billing-account.ts";
import { type ChatSocket, mustConnect } from "./chat.ts";
import { api, session, type World } from "./helpers.ts";
import {
  funded,
  latestCallMaximum,
  modelRequests,
  openLeases,
  settledBalance,
  usageRowsOf,
} from "./metering.ts";

/**
 * Session credit leases under faults (docs/2026-12-01-metering-leases.md): a reset while usage
 * waits under a lease, a lease the account expires under a running call, an erasure while a
 * lease is out, two hundred sessions racing for the last credits, a limit lowered while leases
 * are out. In each: every model call is charged exactly once, nothing stays held, the ledger
 * reconciles.
 */

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const agentStub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Once every lease is back: nothing held, the balance is the credits less every call's price,
 * one usage row per model call of these sessions, and the cached totals agree with the entries.
 */
async function expectSettled(orgId: string, creditsMicros: number, calls: number) {
  // Under load a cut call's settlement (a lookup of the provider's record first) takes a while.
  for (let i = 0; i < 50 && (await usageRowsOf(orgId, () => true, calls)).length < calls; i++) {
    await sleep(200);
  }
  const balance = await settledBalance(orgId);
  const rows = await usageRowsOf(orgId, () => true, calls);
  expect(rows).toHaveLength(calls);
  expect(new Set(rows.map((row) => row.requestId)).size).toBe(calls);
  const charged = rows.reduce((sum, row) => sum + row.priceMicros, 0);
  expect(balance).toMatchObject({ heldMicros: 0, postedMicros: creditsMicros - charged });
  expect((await billingAccount(env, orgId).reconcile()).ok).toBe(true);
  expect(await openLeases(orgId)).toEqual([]);
  return rows;
}

describe("session leases under faults", { timeout: 60_000 }, () => {
  it("a reset while usage waits under the lease: sent on restart, charged once", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const calls = await modelRequests();
    expect((await chat.turn("one")).text).toBe(devReply("one"));
    expect((await chat.turn("two")).text).toBe(devReply("two"));
    // Reset before the batch goes (it waits a moment after each call).
    await runInDurableObject(agentStub(w.sessionId), (_instance: AssistantAgent, state) => {
      const pending = state.storage.sql
        .exec("SELECT COUNT(*) AS n FROM parley_pending_usage WHERE lease_id IS NOT NULL")
        .one().n;
      expect(pending).toBe(2);
      state.abort("test: reset mid-lease");
    }).catch(() => undefined);
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    // The next connect wakes it: what waited is reported, the session carries on.
    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    expect((await again.turn("three")).text).toBe(devReply("three"));
    expect(await modelRequests()).toBe(calls + 3);
    await expectSettled(w.orgId, 10_000_000, 3);
    again.close();
  });

  it("a read right after a turn finds the call inside its window: usage is dated by the call, not by its report", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    expect((await chat.turn("one")).text).toBe(devReply("one"));
    // The call waits under the lease, dated when it was priced.
    let at: number | undefined;
    for (let i = 0; i < 100 && at === undefined; i++) {
      at = await runInDurableObject(agentStub(w.sessionId), (_instance: AssistantAgent, state) => {
        const [row] = state.storage.sql
          .exec("SELECT payload FROM parley_pending_usage WHERE lease_id IS NOT NULL")
          .toArray();
        return row === undefined ? undefined : (JSON.parse(row.payload as string).at as number);
      });
      if (at === undefined) await sleep(20);
    }
    expect(at).toBeTypeOf("number");
    // A window that ends now, before the read asks the session for it.
    await sleep(50);
    const to = new Date(Date.now()).toISOString();
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const report = await api<{ totals: { requests: number } }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=session&from=${from}&to=${to}`,
      { token: w.admin.token },
    );
    expect(report.body.totals.requests).toBe(1);
    const [row] = await usageRowsOf(w.orgId, () => true, 1);
    expect(row?.createdAt).toBe(at);
    chat.close();
  });

  it("a lease the account expires under a running call: the call is charged once, late, and the session moves to a new lease", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    expect((await chat.turn("first")).text).toBe(devReply("first"));
    const [lease] = await openLeases(w.orgId);
    expect(lease?.request_id).toMatch(/^lease:/);
    const id = crypto.randomUUID();
    const from = chat.frames.length;
    chat.request(id, "a slow one [[tps:30]]");
    await chat.waitForText(id, from);
    // The account's alarm finds the lease past its expiry while the call streams.
    await runInDurableObject(
      billingAccount(env, w.orgId),
      async (instance: BillingAccount, state) => {
        state.storage.sql.exec(
          "UPDATE ledger_holds SET expires_at = ? WHERE request_id = ?",
          Date.now() - 1,
          lease?.request_id as string,
        );
        await instance.alarm();
      },
    );
    expect(await openLeases(w.orgId)).toEqual([]);
    await chat.result(id, from);
    // The next turns draw on a new lease, once the agent heard the old one closed.
    await sleep(1_500);
    expect((await chat.turn("after")).text).toBe(devReply("after"));
    const rows = await expectSettled(w.orgId, 10_000_000, 3);
    const slow = rows.filter((row) => row.outcome === "settled_late");
    expect(slow.length).toBeGreaterThanOrEqual(1);
    chat.close();
  });

  it("an erasure while a lease is out: what was drawn is charged, the rest returned, nothing held", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const turn = await chat.turn("soon gone");
    expect(await openLeases(w.orgId)).toHaveLength(1);
    const res = await api("DELETE", `/api/sessions/${w.sessionId}`, { token: w.member.token });
    expect(res.status).toBe(204);
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    // The lease came back with the session's last call, before its storage went.
    const balance = await billingAccount(env, w.orgId).balance();
    expect(balance).toMatchObject({
      heldMicros: 0,
      postedMicros: 10_000_000 - (turn.metadata.priceMicros as number),
    });
    expect((await billingAccount(env, w.orgId).sessionSpend(w.sessionId)).priceMicros).toBe(
      turn.metadata.priceMicros,
    );
    expect(await openLeases(w.orgId)).toEqual([]);
  });

  it("an idle session's lease goes back by a durable check: kept while calls come, also after a reset, returned once idle", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    expect((await chat.turn("idle soon")).text).toBe(devReply("idle soon"));
    const idleChecks = async (instance: AssistantAgent) =>
      (await instance.listSchedules()).filter((s) => s.callback === "returnIdleLease");
    await runInDurableObject(agentStub(w.sessionId), async (instance: AssistantAgent) => {
      // One check, a minute after the call, armed once (not a timer set again per call).
      const [check, ...more] = await idleChecks(instance);
      expect(more).toEqual([]);
      expect(check?.type).toBe("scheduled");
      // Woken before the session idled, it keeps the lease and looks again at the same time.
      await instance.returnIdleLease();
      expect(await idleChecks(instance)).toHaveLength(1);
      // What the call drew goes to the account now, so nothing waits for a restart to send.
      await instance.reportUsage();
    });
    expect(await openLeases(w.orgId)).toHaveLength(1);
    const reset = async () => {
      await runInDurableObject(agentStub(w.sessionId), (_instance: AssistantAgent, state) => {
        state.abort("test: reset with the lease out");
      }).catch(() => undefined);
    };
    await reset();
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    // A reset (or an eviction) forgets the memory, not when the last call drew: still kept.
    await runInDurableObject(agentStub(w.sessionId), (instance: AssistantAgent) =>
      instance.returnIdleLease(),
    );
    expect(await openLeases(w.orgId)).toHaveLength(1);
    // Once the last call is older than the idle time, the check gives the lease back.
    await reset();
    await runInDurableObject(agentStub(w.sessionId), (instance: AssistantAgent, state) => {
      state.storage.sql.exec("UPDATE parley_lease SET last_draw_at = ?", Date.now() - 61_000);
      return instance.returnIdleLease();
    });
    expect(await openLeases(w.orgId)).toEqual([]);
    await expectSettled(w.orgId, 10_000_000, 1);
  });

  it("two hundred sessions of one org racing near a zero balance: only affordable calls run, each charged once", async () => {
    // The most one call can cost, measured on a probe session.
    const probe = await funded(1_000_000_000);
    const probeChat = await mustConnect(agentPath(probe.sessionId), probe.member.token);
    await probeChat.turn("race");
    const maxCall = await latestCallMaximum(probe.sessionId);
    probeChat.close();

    const credits = maxCall * 5;
    const w = await funded(credits);
    const sessions = await Promise.all(
      Array.from({ length: 200 }, () => session(w.projectId, w.orgId, w.member.id)),
    );
    const chats: ChatSocket[] = [];
    for (let i = 0; i < sessions.length; i += 50) {
      chats.push(
        ...(await Promise.all(
          sessions.slice(i, i + 50).map((id) => mustConnect(agentPath(id), w.member.token)),
        )),
      );
    }
    const calls = await modelRequests();
    const turns = await Promise.all(chats.map((chat) => chat.turn("race [[tokens:4]]")));
    const answered = turns.filter((turn) => turn.text === devReply("race [[tokens:4]]"));
    const refused = turns.filter((turn) => turn.parleyError?.code === "insufficient_credits");
    // Two hundred turns at once on one machine: a few may wait on the model past the stall
    // timeout (1.5 s here) and are cut, charged for what the provider produced, if anything.
    // Every other turn ended with an error the client was told of (a cut call, a stall).
    const cut = turns.filter((turn) => !answered.includes(turn) && !refused.includes(turn));
    expect(cut.every((turn) => turn.parleyError !== undefined || turn.outcome === "error")).toBe(
      true,
    );
    expect(refused.length).toBeGreaterThanOrEqual(100);
    // A refused turn called no provider; a cut one may have. Every call whose answer began is
    // charged once (a cut call that never got its first byte is released: nothing to look up).
    const made = (await modelRequests()) - calls;
    expect(made).toBeGreaterThanOrEqual(Math.max(1, answered.length));
    expect(made).toBeLessThanOrEqual(answered.length + cut.length);
    let balance = await settledBalance(w.orgId);
    for (let i = 0; i < 100 && balance.heldMicros > 0; i++) {
      await sleep(100);
      balance = await settledBalance(w.orgId);
    }
    const rows = await usageRowsOf(w.orgId, () => true, answered.length);
    expect(rows.length).toBeGreaterThanOrEqual(answered.length);
    expect(rows.length).toBeLessThanOrEqual(made);
    expect(new Set(rows.map((row) => row.requestId)).size).toBe(rows.length);
    const charged = rows.reduce((sum, row) => sum + row.priceMicros, 0);
    expect(balance).toMatchObject({ heldMicros: 0, postedMicros: credits - charged });
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
    // No overdraft: each call was held or drawn at its maximum before it was made.
    expect((await billingAccount(env, w.orgId).balance()).availableMicros).toBeGreaterThanOrEqual(
      0,
    );
    for (const chat of chats) chat.close();
  });

  it("a spend limit lowered while leases are out: the sessions give them back, and the next calls obey the new limit", async () => {
    const w = await funded();
    const ids = [
      w.sessionId,
      ...(await Promise.all([1, 2].map(() => session(w.projectId, w.orgId, w.member.id)))),
    ];
    const chats = await Promise.all(ids.map((id) => mustConnect(agentPath(id), w.member.token)));
    for (const chat of chats) await chat.turn("warm");
    expect(await openLeases(w.orgId)).toHaveLength(3);
    const maxCall = await latestCallMaximum(w.sessionId);
    const spent = (await settledBalanceKeepingLeases(w)).spentMicros;
    // Room for one more call's maximum this month, not three.
    const limit = spent + maxCall + Math.floor(maxCall / 2);
    const res = await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.owner.token,
      body: { orgMonthlyLimitMicros: limit },
    });
    expect(res.status).toBe(200);
    // The account told each session: every lease comes back.
    for (let i = 0; i < 100 && (await openLeases(w.orgId)).length > 0; i++) await sleep(20);
    expect(await openLeases(w.orgId)).toEqual([]);
    const turns = await Promise.all(chats.map((chat) => chat.turn("after the change")));
    const answered = turns.filter((turn) => turn.text === devReply("after the change"));
    expect(answered).toHaveLength(1);
    expect(turns.filter((turn) => turn.parleyError?.code === "spend_limit")).toHaveLength(2);
    await expectSettled(w.orgId, 10_000_000, 4);
    const month = (await billingAccount(env, w.orgId).balance()).postedMicros;
    expect(10_000_000 - month).toBeLessThanOrEqual(limit);
    for (const chat of chats) chat.close();
  });
});

/** What the org has been charged so far (its sessions report first; leases stay out). */
async function settledBalanceKeepingLeases(w: World) {
  await Promise.all(
    (await openLeases(w.orgId)).map((lease) =>
      runInDurableObject(
        agentStub(lease.session_id as string),
        async (instance: AssistantAgent) => {
          await (
            instance as unknown as { meter: { lease: { flush(): Promise<void> } } }
          ).meter.lease.flush();
        },
      ),
    ),
  );
  const { postedMicros } = await billingAccount(env, w.orgId).balance();
  return { spentMicros: 10_000_000 - postedMicros };
}

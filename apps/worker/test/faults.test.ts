import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { applyMarkup, type UsageRow } from "@parley/billing";
import { devReply } from "@parley/dev-model/reply";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { OnboardingAgent } from "../src/agents/onboarding-agent.ts";
import { billingAccount } from "../src/billing/account.ts";
import { BillingAccount } from "../src/billing/billing-account.ts";
import { ErasureJob } from "../src/erasure/erasure-job.ts";
import { signed } from "./attacks.ts";
import { type ChatSocket, connect, mustConnect } from "./chat.ts";
import { api, errorCode, snapshot, type World } from "./helpers.ts";
import { forgetAccess, funded, generationCost, modelRequests, settledBalance } from "./metering.ts";
import { checkoutEvent, deliver, refundEvent, startedSession, uid } from "./stripe.ts";

/**
 * The fault suite: each case breaks one thing mid-flight (the object, the model, the client, the
 * webhook order, erasure, an alarm's delivery, D1) and then checks the same four invariants:
 * no accepted user message lost, no model call charged twice or at anything but the provider's cost
 * plus markup, a reconciled ledger with nothing held, and a clear signal to the client.
 */

const GRANT = 10_000_000;
const markup = Number(env.MARKUP_BPS);
const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const agentStub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StoredMessage {
  role: string;
  parts: { type: string; text?: string }[];
  metadata?: Record<string, unknown>;
}

const textOf = (message: StoredMessage) =>
  message.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

async function transcript(w: World): Promise<StoredMessage[]> {
  const res = await api<StoredMessage[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
    token: w.member.token,
  });
  expect(res.status).toBe(200);
  return res.body;
}

/** 0 lost user messages: the stored user messages are exactly the accepted ones, each once. */
async function expectNoLostMessages(w: World, accepted: string[]): Promise<StoredMessage[]> {
  const stored = await transcript(w);
  expect(stored.filter((m) => m.role === "user").map(textOf)).toEqual(accepted);
  return stored;
}

async function usageOf(orgId: string): Promise<UsageRow[]> {
  return billingAccount(env, orgId).usageRows({ from: 0, to: Date.now() + 1, limit: 1000 });
}

/** Polls `read` until `done` holds (metering and settlement run after the reply), or gives up. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 150 && !done(value); i++) {
    await sleep(20);
    value = await read();
  }
  return value;
}

/** The server's id of a turn (usage is keyed `<turnId>:<step>`), read off the reply the socket got. */
const turnOf = (chat: ChatSocket, requestId: string): string =>
  chat.turnIdOf(requestId) ?? `no turn id for ${requestId}`;

/**
 * 0 double charges: the org's usage is exactly `<turnId>:<step>` for the given turns and step
 * counts, each model call once, no generation charged twice, and each charged what the provider
 * reported for its generation plus markup.
 */
async function expectChargedOnce(w: World, turns: Record<string, number>): Promise<UsageRow[]> {
  const expected = Object.entries(turns)
    .flatMap(([id, steps]) => Array.from({ length: steps }, (_, i) => `${id}:${i}`))
    .sort();
  await eventually(
    () => usageOf(w.orgId),
    (rows) => rows.length >= expected.length,
  );
  // Give a late second settlement (a re-run, a retried metering) the time to land.
  await sleep(250);
  const rows = await usageOf(w.orgId);
  expect(rows.map((r) => r.requestId).sort()).toEqual(expected);
  const generations = rows.flatMap((r) => JSON.parse(r.generationIds) as string[]);
  expect(generations).toHaveLength(rows.length);
  expect(new Set(generations).size).toBe(generations.length);
  for (const row of rows) {
    const cost = await generationCost(row.generationIds);
    expect(row).toMatchObject({
      billable: 1,
      costMicros: cost,
      priceMicros: applyMarkup(cost, markup),
    });
  }
  return rows;
}

/**
 * The ledger reconciled: nothing left held, posted = credits in - everything charged, one usage
 * entry per charged call, and the cached totals agree with the entries.
 */
async function expectReconciled(w: World, creditsMicros = GRANT): Promise<void> {
  const account = billingAccount(env, w.orgId);
  const balance = await eventually(
    () => settledBalance(w.orgId),
    (b) => b.heldMicros === 0,
  );
  const rows = await usageOf(w.orgId);
  const charged = rows.reduce((sum, r) => sum + r.priceMicros, 0);
  expect(balance).toMatchObject({
    heldMicros: 0,
    postedMicros: creditsMicros - charged,
    availableMicros: creditsMicros - charged,
  });
  const entries = await account.entries(null, 1000);
  expect(
    entries
      .filter((e) => e.kind === "usage")
      .map((e) => e.reference)
      .sort(),
  ).toEqual(
    rows
      .filter((r) => r.priceMicros > 0)
      .map((r) => r.requestId)
      .sort(),
  );
  expect(await account.reconcile()).toMatchObject({ ok: true });
}

/** Sends a message and returns once the reply is streaming text. */
async function streaming(chat: ChatSocket, text: string): Promise<string> {
  const id = crypto.randomUUID();
  chat.request(id, text);
  await chat.waitForText(id);
  return id;
}

describe("faults on an assistant turn", { timeout: 20_000 }, () => {
  it("the object reset mid-stream: the cut call is settled once on restart, and the session carries on", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = await streaming(chat, "a long one [[tps:30]]");
    await sleep(100);
    const calls = await modelRequests();
    await runInDurableObject(agentStub(w.sessionId), (_instance, state) =>
      state.abort("test: reset mid-stream"),
    ).catch(() => undefined);
    // The client sees its socket drop with the object.
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    expect(chat.closed).not.toBeNull();

    // Reconnecting wakes the object; what the reset left open is settled on start, from the
    // provider's record of the cut generation, and nothing calls the provider again for it.
    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    // The reconnected client learns the reply was cut: the stream ends aborted, and the recovery
    // re-run (which makes no model call) asks for the message again.
    await again.waitFor(
      (f) => f.id === id && f.type === "cf_agent_use_chat_response" && f.done === true,
    );
    expect(again.frames.find((f) => f.id === id && f.done === true)?.outcome).toBe("aborted");
    const interrupted = await again.waitFor(
      (f) => f.type === "cf_agent_use_chat_response" && f.error === true,
    );
    expect(interrupted.body).toMatch(/interrupted\. Please send your message again/);
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    expect(await modelRequests()).toBe(calls);
    await expectReconciled(w);
    const stored = await expectNoLostMessages(w, ["a long one [[tps:30]]"]);
    expect(stored.length).toBeLessThanOrEqual(2);

    const next = crypto.randomUUID();
    expect((await again.turn("still there?", { id: next })).text).toBe(devReply("still there?"));
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1, [turnOf(again, next)]: 1 });
    await expectNoLostMessages(w, ["a long one [[tps:30]]", "still there?"]);
    await expectReconciled(w);
    again.close();
  });

  it("the model erroring mid-stream: an error chunk, the partial call charged once, the chat usable", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const turn = await chat.turn("break please [[error-after:3]]", { id });
    expect(turn.error).toMatch(/model failed to answer/);
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    await expectReconciled(w);
    await expectNoLostMessages(w, ["break please [[error-after:3]]"]);

    const next = crypto.randomUUID();
    expect((await chat.turn("and now?", { id: next })).text).toBe(devReply("and now?"));
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1, [turnOf(chat, next)]: 1 });
    await expectNoLostMessages(w, ["break please [[error-after:3]]", "and now?"]);
    await expectReconciled(w);
    chat.close();
  });

  it("the model hanging mid-stream: cut off by the stall timeout with a clear error, charged once", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    const started = Date.now();
    const turn = await chat.turn("stall out [[hang-after:3]]", { id });
    expect(Date.now() - started).toBeGreaterThanOrEqual(Number(env.MODEL_STALL_TIMEOUT_MS));
    expect(turn.parleyError).toMatchObject({
      code: "internal",
      message: expect.stringMatching(/stopped responding/),
    });
    expect(turn.outcome).toBe("aborted");
    expect(turn.text.length).toBeGreaterThan(0);
    const [row] = await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    expect(row?.completionTokens).toBeGreaterThan(0);
    await expectReconciled(w);
    await expectNoLostMessages(w, ["stall out [[hang-after:3]]"]);
    chat.close();
  });

  it("the client disconnecting mid-stream: the reply finishes server-side, charged once, and a reconnect sees it", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = await streaming(chat, "tell me slowly [[tps:40]]");
    chat.close();

    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    const stored = await eventually(
      () => transcript(w),
      (messages) =>
        messages.at(-1)?.role === "assistant" && messages.at(-1)?.metadata !== undefined,
    );
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(stored[1] as StoredMessage)).toBe(devReply("tell me slowly"));
    const [row] = await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    expect(stored[1]?.metadata).toMatchObject({ priceMicros: row?.priceMicros, steps: 1 });
    await expectReconciled(w);
    await expectNoLostMessages(w, ["tell me slowly [[tps:40]]"]);
    expect((await again.turn("welcome back")).text).toBe(devReply("welcome back"));
    again.close();
  });

  it("erasure during a turn: the socket closes with 4410, the turn is settled once, nothing is re-persisted", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = await streaming(chat, "a long answer [[tps:20]]");
    // The message was accepted and stored before the erasure took it.
    await expectNoLostMessages(w, ["a long answer [[tps:20]]"]);
    const res = await api<{ status: string }>("POST", `/api/orgs/${w.orgId}/erasure-requests`, {
      token: w.admin.token,
      body: { subject: { type: "session", id: w.sessionId }, reason: "user asked" },
    });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe("completed");
    await chat.waitFor(() => chat.closed !== null).catch(() => undefined);
    expect(chat.closed?.code).toBe(4410);

    await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    await expectReconciled(w);
    // Anything still running that wrote after the wipe would bring the chat back: give it the chance.
    await sleep(300);
    await runInDurableObject(agentStub(w.sessionId), (instance: AssistantAgent) => {
      expect(instance.messages).toEqual([]);
    });
    expect((await connect(agentPath(w.sessionId), w.member.token)).status).toBe(410);
  });

  it("D1 failing when a turn is admitted: a clear error, no model call, nothing stored or charged; then it recovers", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const calls = await modelRequests();
    // The access kept since the connect has lapsed: this turn must read D1.
    await forgetAccess(w.sessionId);
    const refused = await withoutTable("memberships", () => chat.turn("are you there?"));
    expect(refused.parleyError?.code).toBe("internal");
    expect(refused.outcome).toBe("error");
    expect(chat.closed).toBeNull();
    expect(await modelRequests()).toBe(calls);
    await expectNoLostMessages(w, []);
    await expectChargedOnce(w, {});
    await expectReconciled(w);

    const id = crypto.randomUUID();
    expect((await chat.turn("are you there now?", { id })).text).toBe(
      devReply("are you there now?"),
    );
    await expectNoLostMessages(w, ["are you there now?"]);
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    await expectReconciled(w);
    chat.close();
  });
});

describe("faults around the ledger", { timeout: 20_000 }, () => {
  it("Stripe webhooks replayed and reordered: each payment credited once, each refund once, the balance exact", async () => {
    const w = await funded();
    const card = { id: uid("cs"), paymentIntent: uid("pi"), cents: 2_500 };
    const bank = { id: uid("cs"), paymentIntent: uid("pi"), cents: 1_000 };
    await startedSession(w.orgId, card);
    await startedSession(w.orgId, bank);
    const completed = checkoutEvent(w.orgId, "checkout.session.completed", card);
    // The refund names no org: it is found from the payment, which has not been recorded yet.
    const refund = refundEvent(null, card.paymentIntent, 500, 2_500);
    const answers: unknown[] = [];
    for (const event of [
      // The refund lands before the payment it refunds (acknowledged and held: the payment
      // applies it when it comes), the payment three times, then Stripe's redeliveries of the
      // refund (already applied).
      refund,
      completed,
      completed,
      completed,
      refund,
      refund,
      // The async success before the "completed, unpaid" event, then another success event.
      checkoutEvent(w.orgId, "checkout.session.async_payment_succeeded", bank),
      checkoutEvent(w.orgId, "checkout.session.completed", { ...bank, paid: false }),
      checkoutEvent(w.orgId, "checkout.session.async_payment_succeeded", bank),
    ]) {
      const res = await deliver(event);
      answers.push(
        res.status === 200
          ? (res.body as { outcome: string }).outcome
          : [res.status, errorCode(res)],
      );
    }
    expect(answers).toEqual([
      "unrecognized",
      "applied",
      "duplicate",
      "duplicate",
      "duplicate",
      "duplicate",
      "applied",
      "ignore",
      "applied",
    ]);
    const credits = GRANT + 25_000_000 - 5_000_000 + 10_000_000;
    const entries = await billingAccount(env, w.orgId).entries(null, 100);
    expect(entries.filter((e) => e.kind === "topup").map((e) => e.amountMicros)).toEqual([
      10_000_000, 25_000_000,
    ]);
    expect(entries.filter((e) => e.kind === "adjustment").map((e) => e.amountMicros)).toEqual([
      -5_000_000,
    ]);
    await expectChargedOnce(w, {});
    await expectReconciled(w, credits);
  });

  it("a step cut by a model error is settled once, by whichever path comes first: nothing parked, nothing logged", async () => {
    const logged: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
    });
    try {
      const w = await funded();
      const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
      for (let i = 0; i < 5; i++) {
        const id = crypto.randomUUID();
        await chat.turn(`break ${i} [[error-after:3]]`, { id });
        await expectChargedOnce(
          w,
          Object.fromEntries(
            chat.frames
              .filter((f) => f.type === "cf_agent_use_chat_response" && typeof f.id === "string")
              .map((f) => chat.turnIdOf(f.id as string))
              .filter((t): t is string => t !== null)
              .map((t) => [t, 1]),
          ),
        );
      }
      chat.close();
      await expectReconciled(w);
      await sleep(300);
      await runInDurableObject(agentStub(w.sessionId), (_instance, state) => {
        expect(state.storage.sql.exec("SELECT * FROM parley_pending_usage").toArray()).toEqual([]);
      });
      expect(logged.filter((line) => line.includes("usage_parked"))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it("an alarm delivering an alert to an endpoint that fails: retried by the next alarm, delivered once", async () => {
    const w = await funded();
    const path = `/alerts/${w.orgId}/flaky`;
    await billingAccount(env, w.orgId).updateSettings(w.orgId, {
      lowBalanceMicros: GRANT,
      alertWebhookUrl: `${env.TEST_MAILBOX_URL}${path}`,
    });
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    expect((await chat.turn("spend a little", { id })).text).toBe(devReply("spend a little"));
    chat.close();

    // The first delivery fails (500); the alarm reschedules it with backoff and retries on its own.
    type Delivery = { body: string };
    const mailbox = async () =>
      (await (await fetch(`${env.TEST_MAILBOX_URL}/?path=${path}`)).json()) as Delivery[];
    const received = await eventually(mailbox, (d) => d.length >= 2);
    // Extra alarm runs after the success must not deliver it again.
    await runDurableObjectAlarm(billingAccount(env, w.orgId));
    await runDurableObjectAlarm(billingAccount(env, w.orgId));
    await sleep(200);
    expect(await mailbox()).toHaveLength(received.length);
    expect(received).toHaveLength(2);
    expect(received[1]?.body).toBe(received[0]?.body);
    expect(JSON.parse(received[0]?.body ?? "{}")).toMatchObject({
      orgId: w.orgId,
      alert: { kind: "low_balance" },
    });
    const alerts = await billingAccount(env, w.orgId).alerts();
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: "low_balance",
        attempts: 2,
        deliveredAt: expect.any(Number),
      }),
    ]);
    await expectNoLostMessages(w, ["spend a little"]);
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    await expectReconciled(w);
  });

  it("an erasure job whose D1 step fails: its alarm retries it and the erasure completes, the ledger intact", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const id = crypto.randomUUID();
    await chat.turn("forget me later", { id });
    chat.close();
    // D1 refuses exactly the directory step's delete; everything else works.
    await env.DB.prepare(
      "CREATE TRIGGER fault_sessions BEFORE DELETE ON sessions BEGIN SELECT RAISE(ABORT, 'injected fault'); END",
    ).run();
    type View = { id: string; status: string; attempts: number; steps: Step[] };
    type Step = { name: string; status: string; detail: string | null };
    let filed: View;
    try {
      const res = await api<View>("POST", `/api/orgs/${w.orgId}/erasure-requests`, {
        token: w.member.token,
        body: { subject: { type: "session", id: w.sessionId }, reason: "user asked" },
      });
      expect(res.status).toBe(202);
      filed = res.body;
    } finally {
      await env.DB.prepare("DROP TRIGGER fault_sessions").run();
    }
    // The requester sees where it stopped and why; the chat itself is already gone.
    expect(filed).toMatchObject({ status: "running", attempts: 1 });
    expect(filed.steps.find((s) => s.name === "agents")?.status).toBe("done");
    expect(filed.steps.find((s) => s.name === "d1")).toMatchObject({
      status: "pending",
      detail: expect.stringMatching(/attempt 1 failed: .*injected fault/),
    });
    expect((await connect(agentPath(w.sessionId), w.member.token)).status).toBe(410);

    // The alarm the failure scheduled runs the job again, from the failed step, to completion.
    const job = env.ERASURE_JOB.get(env.ERASURE_JOB.idFromName(filed.id));
    // The retry is the failure's backoff (2 s after attempt 1), not the 30 s safety net.
    const retryAt = await runInDurableObject(job, (_instance, state) => state.storage.getAlarm());
    expect(retryAt).toBeLessThanOrEqual(Date.now() + 2_000);
    expect(await runDurableObjectAlarm(job)).toBe(true);
    const view = await api<View>("GET", `/api/orgs/${w.orgId}/erasure-requests/${filed.id}`, {
      token: w.owner.token,
    });
    expect(view.body.status).toBe("completed");
    expect(view.body.steps.every((s) => s.status === "done")).toBe(true);
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE id = ?")
      .bind(w.sessionId)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    // The financial record outlives the erasure: the turn is charged once and the ledger balances.
    await expectChargedOnce(w, { [turnOf(chat, id)]: 1 });
    await expectReconciled(w);
  });

  it("D1 failing on a route: 500 internal, no partial write, and the next call works", async () => {
    const w = await funded();
    const before = await snapshot();
    const failed = await withoutTable("audit_log", () =>
      api("POST", `/api/orgs/${w.orgId}/projects`, {
        token: w.owner.token,
        body: { name: "Launch" },
      }),
    );
    expect(failed.status).toBe(500);
    expect(errorCode(failed)).toBe("internal");
    expect(JSON.stringify(failed.body)).not.toMatch(/audit_log|SQLITE|D1_/i);
    // The project insert rode in the same batch as its audit row: neither is there.
    expect(await snapshot()).toEqual(before);

    const created = await api("POST", `/api/orgs/${w.orgId}/projects`, {
      token: w.owner.token,
      body: { name: "Launch" },
    });
    expect(created.status).toBe(201);
    await expectChargedOnce(w, {});
    await expectReconciled(w);
  });
});

describe("alarms never spin (issue 12)", { timeout: 30_000 }, () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("over an idle period, with pending work in every state, each object class's alarm runs a bounded number of times", async () => {
    const runs = {
      BillingAccount: vi.spyOn(BillingAccount.prototype, "alarm"),
      ErasureJob: vi.spyOn(ErasureJob.prototype, "alarm"),
      OnboardingAgent: vi.spyOn(OnboardingAgent.prototype, "alarm"),
      AssistantAgent: vi.spyOn(AssistantAgent.prototype, "alarm"),
    };
    const mailbox = env.TEST_MAILBOX_URL;
    /** An org with a low-balance alert queued for `url`, after one turn's spend. */
    async function queuedAlert(url: string) {
      const w = await funded();
      await billingAccount(env, w.orgId).updateSettings(w.orgId, {
        lowBalanceMicros: GRANT,
        alertWebhookUrl: url,
      });
      return w;
    }
    const spend = async (w: World) => {
      const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
      await chat.turn("spend a little");
      chat.close();
    };
    // 1. Alerts queued, then the webhook URL cleared (the alarm used to re-arm in the past forever).
    const cleared = await queuedAlert(`${mailbox}/alerts/fail-then-cleared`);
    await spend(cleared);
    await billingAccount(env, cleared.orgId).updateSettings(cleared.orgId, {
      alertWebhookUrl: null,
    });
    // 2. An alert queued for a URL that is refused now (saved before the rule): parked, not retried.
    const refused = await queuedAlert(`${mailbox}/alerts/fail-then-refused`);
    await spend(refused);
    await billingAccount(env, refused.orgId).updateSettings(refused.orgId, {
      alertWebhookUrl: "http://10.0.0.1/hook",
    });
    // 3. An endpoint that always fails: retried with backoff (2 s, 4 s, ...), never in a loop.
    const failing = await queuedAlert(`${mailbox}/alerts/fail`);
    await spend(failing);
    // 4. A hold that expires during the idle period: one run voids it.
    const held = await funded();
    await billingAccount(env, held.orgId).reserve({
      requestId: "idle-hold",
      amountMicros: 1_000,
      memberId: held.member.id,
      projectId: held.projectId,
      sessionId: held.sessionId,
      ttlMs: 500,
    });
    // 5. An erasure job whose request does not exist (its alarm fires once and stops).
    const job = env.ERASURE_JOB.get(env.ERASURE_JOB.idFromName("era_missing"));
    await runInDurableObject(job, async (_i, state) => {
      await state.storage.put("requestId", "era_missing");
      await state.storage.setAlarm(Date.now() + 200);
    });
    // 6. An agent holding usage its account refuses for good (parked, not retried), and a socket
    //    whose token expires during the period (one scheduled close).
    const parked = await funded();
    const onboarding = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(parked.projectId));
    const now = Math.floor(Date.now() / 1000);
    const shortLived = await signed(parked.member.id, { claims: { iat: now, exp: now + 2 } });
    const socket = await mustConnect(`/agents/onboarding-agent/${parked.projectId}`, shortLived);
    await runInDurableObject(onboarding, async (instance: OnboardingAgent, state) => {
      state.storage.sql.exec(
        "INSERT INTO parley_pending_usage (request_id, org_id, payload) VALUES ('refused-usage', ?, ?)",
        parked.orgId,
        JSON.stringify({
          requestId: "refused-usage",
          costMicros: 10,
          priceMicros: 12,
          tokens: {
            promptTokens: 1,
            completionTokens: 1,
            cachedPromptTokens: 0,
            reasoningTokens: 0,
          },
          model: "parley/dev",
          generationIds: [],
          billable: true,
        }),
      );
      await instance.retryPendingUsage();
    });

    for (const spy of Object.values(runs)) spy.mockClear();
    const idleMs = 5_000;
    await sleep(idleMs);
    const counts = Object.fromEntries(
      Object.entries(runs).map(([name, spy]) => [name, spy.mock.calls.length]),
    );
    // Four accounts: the hold's expiry (1), the failing endpoint's backoff (at most 3 in 5 s), and
    // the parked ones at most one run each to park. A spinning alarm runs hundreds of times a second.
    expect(counts.BillingAccount).toBeLessThanOrEqual(8);
    expect(counts.ErasureJob).toBeLessThanOrEqual(1);
    expect(counts.OnboardingAgent).toBeLessThanOrEqual(2);
    expect(counts.AssistantAgent).toBeLessThanOrEqual(4);
    expect(socket.closed?.code).toBe(1013);

    // Nothing is left armed in the past, and the work that cannot be done says why.
    for (const w of [cleared, refused, failing, held]) {
      const alarm = await runInDurableObject(billingAccount(env, w.orgId), (_i, state) =>
        state.storage.getAlarm(),
      );
      if (alarm !== null) expect(alarm).toBeGreaterThan(Date.now());
    }
    const reasons = async (w: World) =>
      (await billingAccount(env, w.orgId).alerts()).map((a) => a.parkedReason);
    expect(await reasons(cleared)).toEqual([expect.stringMatching(/URL was removed/)]);
    expect(await reasons(refused)).toEqual([expect.stringMatching(/URL is refused/)]);
    expect(await reasons(failing)).toEqual([null]);
    await runInDurableObject(onboarding, (_i, state) => {
      expect(
        state.storage.sql
          .exec("SELECT request_id, parked_reason FROM parley_pending_usage")
          .toArray(),
      ).toEqual([{ request_id: "refused-usage", parked_reason: "no_hold" }]);
    });
    expect((await settledBalance(held.orgId)).heldMicros).toBe(0);
  });
});

/** Runs `fn` while a D1 table is missing (renamed away), restoring it whatever happens. */
async function withoutTable<T>(table: string, fn: () => Promise<T>): Promise<T> {
  await env.DB.prepare(`ALTER TABLE ${table} RENAME TO ${table}_away`).run();
  try {
    return await fn();
  } finally {
    await env.DB.prepare(`ALTER TABLE ${table}_away RENAME TO ${table}`).run();
  }
}

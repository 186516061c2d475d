import { describe, expect, it } from "vitest";
import { ALERT_ATTEMPTS, AlertOutbox, DELIVERY_LEASE_MS } from "./alert-outbox.ts";
import type { AlertRow } from "./ledger-store.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

const NOW = Date.UTC(2026, 11, 1, 12);

const alert = (key: string, firedAt = NOW): AlertRow => ({
  key,
  kind: "org_monthly_spend",
  memberId: null,
  period: "2026-12",
  thresholdPct: 80,
  limitMicros: 100_000_000,
  levelMicros: 80_000_000,
  firedAt,
});

/** An account's tables on Node's SQLite, with the alerts fired (in ledger_alerts) and the outbox. */
function account(alerts: readonly AlertRow[] = []) {
  const executor = nodeSqliteExecutor();
  const store = new SqlLedgerStore(executor);
  store.migrate();
  for (const row of alerts) store.insertAlert(row);
  const outbox = new AlertOutbox(executor);
  outbox.migrate();
  /** The outbox row of `key` as stored. */
  const row = (key: string) =>
    [...executor.exec("SELECT * FROM alert_outbox WHERE key = ?", key)][0];
  const state = (key: string) => outbox.list(100).find((a) => a.key === key);
  return { executor, outbox, row, state };
}

describe("alert outbox", () => {
  it("creates its table once, and adds the parking columns to an outbox made before them", () => {
    const executor = nodeSqliteExecutor();
    executor.exec(`CREATE TABLE alert_outbox (
      key TEXT PRIMARY KEY,
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER NOT NULL,
      delivered_at INTEGER
    )`);
    executor.exec("INSERT INTO alert_outbox (key, next_attempt_at) VALUES ('old', 5)");
    const outbox = new AlertOutbox(executor);
    outbox.migrate();
    outbox.migrate();
    const columns = [...executor.exec("SELECT name FROM pragma_table_info('alert_outbox')")].map(
      (c) => c.name,
    );
    expect(columns).toEqual([
      "key",
      "attempts",
      "next_attempt_at",
      "delivered_at",
      "parked_at",
      "parked_reason",
    ]);
    expect([...executor.exec("SELECT * FROM alert_outbox")]).toEqual([
      {
        key: "old",
        attempts: 0,
        next_attempt_at: 5,
        delivered_at: null,
        parked_at: null,
        parked_reason: null,
      },
    ]);
  });

  it("queues an alert once: queueing it again changes nothing, even after an attempt", () => {
    const { outbox, row } = account([alert("a")]);
    outbox.queue([alert("a")], NOW);
    outbox.queue([alert("a")], NOW + 5_000);
    expect(row("a")).toMatchObject({ attempts: 0, next_attempt_at: NOW });
    const [due] = outbox.claimDue(NOW);
    expect(due).toEqual({ key: "a", attempts: 0 });
    if (due) outbox.recordAttempt(due, null, NOW);
    outbox.queue([alert("a")], NOW + 10);
    expect(row("a")).toMatchObject({ attempts: 1, next_attempt_at: NOW + 2_000 });
  });

  it("claims only what is due, and a claimed row is skipped by a second claim until the lease runs out", () => {
    const { outbox } = account([alert("a"), alert("b")]);
    outbox.queue([alert("a")], NOW);
    outbox.queue([alert("b")], NOW + 1);
    expect(outbox.nextAttemptAt()).toBe(NOW);
    expect(outbox.claimDue(NOW - 1)).toEqual([]);
    expect(outbox.claimDue(NOW)).toEqual([{ key: "a", attempts: 0 }]);
    // A second alarm run meanwhile: "a" is owned by the first one.
    expect(outbox.claimDue(NOW)).toEqual([]);
    expect(outbox.claimDue(NOW + 1)).toEqual([{ key: "b", attempts: 0 }]);
    expect(outbox.nextAttemptAt()).toBe(NOW + DELIVERY_LEASE_MS);
    expect(outbox.claimDue(NOW + DELIVERY_LEASE_MS - 1)).toEqual([]);
    // The first run died without recording: the row is tried again once its lease ran out.
    expect(outbox.claimDue(NOW + DELIVERY_LEASE_MS)).toEqual([{ key: "a", attempts: 0 }]);
  });

  it("claims at most 20 alerts per run", () => {
    const keys = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, "0")}`);
    const { outbox } = account(keys.map((key) => alert(key)));
    outbox.queue(
      keys.map((key) => ({ key })),
      NOW,
    );
    const first = outbox.claimDue(NOW);
    const second = outbox.claimDue(NOW);
    expect(first).toHaveLength(20);
    expect(second).toHaveLength(5);
    expect(new Set([...first, ...second].map((d) => d.key))).toEqual(new Set(keys));
  });

  it("backs off 2^attempts seconds from the claim after each failure and parks after the last one", () => {
    const { outbox, row, state } = account([alert("a")]);
    outbox.queue([alert("a")], NOW);
    let at = NOW;
    for (let attempt = 1; attempt <= ALERT_ATTEMPTS; attempt++) {
      const due = outbox.claimDue(at);
      expect(due).toEqual([{ key: "a", attempts: attempt - 1 }]);
      outbox.recordAttempt(due[0] as (typeof due)[number], null, at);
      const next = at + 1000 * 2 ** attempt;
      expect(row("a")).toMatchObject({
        attempts: attempt,
        delivered_at: null,
        next_attempt_at: next,
      });
      if (attempt < ALERT_ATTEMPTS) {
        expect(state("a")?.parkedReason).toBeNull();
        expect(outbox.nextAttemptAt()).toBe(next);
        expect(outbox.claimDue(next - 1)).toEqual([]);
      }
      at = next;
    }
    expect(state("a")).toMatchObject({
      attempts: ALERT_ATTEMPTS,
      deliveredAt: null,
      parkedReason: `gave up after ${ALERT_ATTEMPTS} failed deliveries`,
    });
    expect(row("a")?.parked_at).toBe(at - 1000 * 2 ** ALERT_ATTEMPTS);
    expect(outbox.nextAttemptAt()).toBeNull();
    expect(outbox.claimDue(at + 1_000_000)).toEqual([]);
  });

  it("records a delivery: the alert is done and nothing waits on it", () => {
    const { outbox, state } = account([alert("a")]);
    outbox.queue([alert("a")], NOW);
    const [due] = outbox.claimDue(NOW);
    if (due) outbox.recordAttempt(due, NOW + 250, NOW);
    expect(state("a")).toMatchObject({ attempts: 1, deliveredAt: NOW + 250, parkedReason: null });
    expect(outbox.nextAttemptAt()).toBeNull();
    expect(outbox.claimDue(NOW + 1_000_000)).toEqual([]);
    // A delivered alert is never parked afterwards.
    outbox.park("the alert webhook URL was removed", NOW + 10);
    expect(state("a")?.parkedReason).toBeNull();
  });

  it("does not park an alert delivered on the last allowed attempt", () => {
    const { outbox, state } = account([alert("a")]);
    outbox.queue([alert("a")], NOW);
    let at = NOW;
    for (let attempt = 1; attempt <= ALERT_ATTEMPTS; attempt++) {
      const [due] = outbox.claimDue(at);
      expect(due).toBeDefined();
      if (due) outbox.recordAttempt(due, attempt === ALERT_ATTEMPTS ? at : null, at);
      at += 1000 * 2 ** attempt;
    }
    expect(state("a")).toMatchObject({ attempts: ALERT_ATTEMPTS, parkedReason: null });
    expect(state("a")?.deliveredAt).not.toBeNull();
  });

  it("parks every undelivered alert, or one, and keeps the first reason", () => {
    const { outbox, row, state } = account([alert("a"), alert("b"), alert("c"), alert("d")]);
    outbox.queue([alert("a"), alert("b"), alert("c"), alert("d")], NOW);
    for (const due of outbox.claimDue(NOW)) {
      outbox.recordAttempt(due, due.key === "d" ? NOW : null, NOW);
    }
    outbox.park("the alert no longer exists", NOW + 1, "a");
    expect(state("a")?.parkedReason).toBe("the alert no longer exists");
    expect(state("b")?.parkedReason).toBeNull();
    expect(outbox.nextAttemptAt()).toBe(NOW + 2_000);

    outbox.park("the alert webhook URL was removed", NOW + 2);
    expect(state("a")?.parkedReason).toBe("the alert no longer exists");
    expect(row("a")?.parked_at).toBe(NOW + 1);
    expect(state("b")?.parkedReason).toBe("the alert webhook URL was removed");
    expect(state("c")?.parkedReason).toBe("the alert webhook URL was removed");
    expect(row("c")?.parked_at).toBe(NOW + 2);
    expect(state("d")).toMatchObject({ deliveredAt: NOW, parkedReason: null });
    expect(outbox.nextAttemptAt()).toBeNull();
    expect(outbox.claimDue(NOW + 1_000_000)).toEqual([]);
  });

  it("lists alerts newest first by (fired_at, key), with their delivery state, a keyset page at a time", () => {
    const fired = [
      alert("k1", NOW),
      alert("k2", NOW),
      alert("k3", NOW + 1),
      alert("k4", NOW - 1),
      alert("k5", NOW),
      alert("k6", NOW + 1),
      alert("k7", NOW - 5),
    ];
    const { outbox } = account(fired);
    outbox.queue([alert("k2")], NOW);
    const [due] = outbox.claimDue(NOW);
    if (due) outbox.recordAttempt(due, null, NOW);

    const all = outbox.list(100);
    expect(all.map((a) => a.key)).toEqual(["k6", "k3", "k5", "k2", "k1", "k4", "k7"]);
    expect(all.find((a) => a.key === "k2")).toEqual({
      ...alert("k2"),
      attempts: 1,
      deliveredAt: null,
      parkedReason: null,
    });
    // Never queued (no webhook URL then): listed with no delivery state.
    expect(all.find((a) => a.key === "k1")).toEqual({
      ...alert("k1"),
      attempts: 0,
      deliveredAt: null,
      parkedReason: null,
    });

    for (const size of [1, 2, 3]) {
      const paged: string[] = [];
      let before: { firedAt: number; key: string } | undefined;
      for (let pages = 0; ; pages++) {
        expect(pages).toBeLessThanOrEqual(all.length);
        const page = outbox.list(size, before);
        paged.push(...page.map((a) => a.key));
        const last = page.at(-1);
        if (page.length < size || last === undefined) break;
        before = { firedAt: last.firedAt, key: last.key };
      }
      expect(paged).toEqual(all.map((a) => a.key));
    }
  });
});

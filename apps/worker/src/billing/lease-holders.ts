import { isLeaseId, type LedgerStore } from "@parley/billing";
import { agentSettings } from "../env.ts";

/** How stale a session's recorded `seen_at` may be (much less than a lease's life). */
const SEEN_PRECISION_MS = 60_000;
/** How many sessions' write times are kept before the stale ones are first dropped. */
const WRITTEN_PRUNE_AT = 1_000;
/** How long a read waits for lease holders to report. */
const COLLECT_WAIT_MS = 2_000;

/**
 * The sessions of one org that hold (or lately held) a credit lease, as its BillingAccount reaches
 * them: before a read they report what they drew (`collect`), and when a limit changes or a call
 * is refused they give their leases back (`revoke`). Keeps its table in the account's SQLite.
 */
export class LeaseHolders {
  readonly #sql: SqlStorage;
  readonly #store: Pick<LedgerStore, "listOpenHolds">;
  readonly #env: Env;
  /** The round of reports in flight, and the one that the reads arriving now wait for. */
  #round: Promise<void> | null = null;
  #nextRound: Promise<void> | null = null;

  constructor(sql: SqlStorage, store: Pick<LedgerStore, "listOpenHolds">, env: Env) {
    this.#sql = sql;
    this.#store = store;
    this.#env = env;
    // The sessions that leased lately, for a read to ask what they have not reported yet.
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS lease_sessions (session_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL)",
    );
  }

  /** When this object last wrote each session's `seen_at` (a write a minute is plenty). */
  readonly #written = new Map<string, number>();
  #pruneAt = WRITTEN_PRUNE_AT;

  /** Records that a session leased at `now`: reads within a lease's lifetime ask it to report. */
  seen(sessionId: string, now: number): void {
    // A lease lives 20 minutes: a `seen_at` up to a minute old asks the same sessions.
    const written = this.#written.get(sessionId);
    if (written !== undefined && now - written < SEEN_PRECISION_MS) return;
    // Entries older than the precision say nothing any more: dropped, so an account that sees
    // many sessions over its life keeps about the last minute's in memory. Pruned when the map
    // doubles, so a busy minute costs no scan per write.
    if (this.#written.size >= this.#pruneAt) {
      for (const [id, at] of this.#written) {
        if (now - at >= SEEN_PRECISION_MS) this.#written.delete(id);
      }
      this.#pruneAt = Math.max(WRITTEN_PRUNE_AT, 2 * this.#written.size);
    }
    this.#written.set(sessionId, now);
    this.#sql.exec(
      "INSERT INTO lease_sessions (session_id, seen_at) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET seen_at = excluded.seen_at",
      sessionId,
      now,
    );
  }

  /** How many sessions' write times are kept in memory (tests). */
  get tracked(): number {
    return this.#written.size;
  }

  /** Drops a session from those the reads ask. */
  forget(sessionId: string): void {
    this.#written.delete(sessionId);
    this.#sql.exec("DELETE FROM lease_sessions WHERE session_id = ?", sessionId);
  }

  /** The sessions holding an open lease (but `except`). */
  holding(except: string | null): string[] {
    const sessions = new Set<string>();
    for (const hold of this.#store.listOpenHolds()) {
      if (isLeaseId(hold.requestId) && hold.sessionId !== null && hold.sessionId !== except) {
        sessions.add(hold.sessionId);
      }
    }
    return [...sessions];
  }

  /**
   * A limit changed, or a call was refused while leases are out: every session holding a lease is told to draw no more on it and to return
   * it, so the next call is admitted under the new limit (a new lease is sized by it, or a per-call
   * hold). Until a session hears it, only what it already drew can pass the new limit (the bound in
   * docs/2026-12-01-metering-leases.md). An erased session is never addressed (that would make it
   * again): its lease was returned by the erasure, or expires.
   */
  async revoke(except: string | null = null): Promise<void> {
    const sessions = await this.#live(except);
    await Promise.allSettled(sessions.map((session) => session.dropLease()));
  }

  /**
   * Before a read of the org's usage or balance: every session that leased within a lease's
   * lifetime reports what it drew and has not reported yet (sessions report with their renewals,
   * not at each call), so the read sees every call settled before it arrived. A read joins the
   * round that starts next (reads that come together share one); one in flight that started
   * before the read is not enough. A session that does not answer within 2 s is not waited for:
   * its calls come with its next renewal or return.
   */
  async collect(): Promise<void> {
    if (this.#nextRound === null) {
      const previous = this.#round ?? Promise.resolve();
      const round: Promise<void> = previous.then(() => {
        this.#round = round;
        this.#nextRound = null;
        return this.#ask();
      });
      this.#nextRound = round;
      void round.finally(() => {
        if (this.#round === round) this.#round = null;
      });
    }
    await this.#nextRound;
  }

  async #ask(): Promise<void> {
    try {
      const sessions = await this.#live(null, true);
      if (sessions.length === 0) return;
      const timeout = new Promise((resolve) => setTimeout(resolve, COLLECT_WAIT_MS));
      await Promise.race([Promise.allSettled(sessions.map((s) => s.reportUsage())), timeout]);
    } catch {
      // D1 unreachable: the read shows what was reported so far.
    }
  }

  /**
   * The sessions holding an open lease (but `except`), or with `recent`, every session that leased
   * within a lease's lifetime (its last calls may still wait to be reported), as stubs; erased
   * ones are never addressed.
   */
  async #live(except: string | null = null, recent = false) {
    const sessions = recent
      ? this.#sql
          .exec(
            "SELECT session_id FROM lease_sessions WHERE seen_at > ?",
            Date.now() - agentSettings(this.#env).lease.policy.ttlMs - SEEN_PRECISION_MS,
          )
          .toArray()
          .map((row) => row.session_id as string)
      : this.holding(except);
    if (sessions.length === 0) return [];
    const { results } = await this.#env.DB.prepare(
      // One JSON value, not a parameter per session: D1 binds at most 100, and an org can have
      // many more sessions holding leases.
      "SELECT subject_id FROM tombstones WHERE subject_id IN (SELECT value FROM json_each(?))",
    )
      .bind(JSON.stringify(sessions))
      .all<{ subject_id: string }>();
    const erased = new Set(results.map((row) => row.subject_id));
    const agents = this.#env.ASSISTANT_AGENT;
    return sessions.filter((id) => !erased.has(id)).map((id) => agents.get(agents.idFromName(id)));
  }
}

import type { EndUserLimits, LocalLease } from "@parley/billing";

/**
 * The session lease's local side, as stored: who it is for, what the agent it runs in provides,
 * and `parley_lease`'s one row (session-lease.ts keeps it and is its only writer).
 */

/** Who a session's lease is for: fixed for the session's life (its org, owner and project). */
export interface LeaseOwner {
  orgId: string;
  memberId: string;
  projectId: string | null;
  sessionId: string;
  /** Set for an end user's session: their app's limits, sent with every grant asked for. */
  endUserLimits?: EndUserLimits;
}

/** `parley_lease`'s one row: the session's owner, its current lease, the next lease's number. */
export type LeaseRow = LeaseOwner & { lease: LocalLease | null; nextN: number; lastDrawAt: number };

/** What the lease needs from the agent it runs in. */
export interface LeaseHost {
  readonly sql: SqlStorage;
  readonly env: Cloudflare.Env;
  erased(): boolean;
  /** Runs `fn` as one storage transaction. */
  transact<T>(fn: () => T): T;
  /** Schedules the host's `retryPendingUsage` (durable: it survives an eviction). */
  retryLater(seconds: number): Promise<unknown>;
  /** Schedules the host's `returnIdleLease` at `at` (`key` once, however often asked). */
  wakeAt(at: Date, key: string): Promise<unknown>;
  /** Usage the account refused for good: parked locally with the reason, never retried. */
  park(requestId: string, reason: string): void;
  track<T>(work: Promise<T>): Promise<T>;
}

/** `parley_lease`'s row, or null before the session's first lease. */
export function readLeaseRow(sql: SqlStorage): LeaseRow | null {
  const row = sql.exec("SELECT * FROM parley_lease WHERE id = 1").toArray()[0];
  if (!row) return null;
  return {
    orgId: row.org_id as string,
    memberId: row.member_id as string,
    projectId: row.project_id as string | null,
    sessionId: row.session_id as string,
    nextN: row.next_n as number,
    lastDrawAt: (row.last_draw_at as number | null) ?? 0,
    lease:
      row.lease_id === null
        ? null
        : {
            id: row.lease_id as string,
            grantedMicros: row.granted_micros as number,
            drawnMicros: row.drawn_micros as number,
            expiresAt: row.expires_at as number,
          },
  };
}

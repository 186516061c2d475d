/**
 * A model call's own hold: reserved before the call, settled to what it cost after it (or released
 * when no call was made), and expired by the alarm when its caller never came back. The two phases
 * are what keep a balance from being spent twice by calls running at once: a call is admitted
 * against `available`, which its hold lowers until the settle replaces it with the charge. A
 * session's lease is the same hold kept across many calls (lease-reports.ts).
 */

import { type AlertTriggers, alertMember } from "./alert-triggers.ts";
import { assertDuration, assertId, assertTime } from "./input-checks.ts";
import { isLeaseId } from "./lease.ts";
import type { LedgerBook } from "./ledger-book.ts";
import type { AlertRow, EntryRow, HoldRow, UsageOutcome, UsageRow } from "./ledger-store.ts";
import { assertPositiveMicros } from "./money.ts";
import {
  type Attribution,
  assertSettle,
  overrun,
  type SettleInput,
  sameAttribution,
  sameSettle,
  usageKey,
  usageRow,
  usageTime,
} from "./settlement.ts";
import {
  assertEndUserLimits,
  type EndUserLimits,
  type SpendLimitScope,
  type SpendLimits,
} from "./spend-limits.ts";

export interface ReserveInput {
  requestId: string;
  amountMicros: number;
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
  now: number;
  ttlMs: number;
  /** Set when `memberId` is an end user's id: their app's limits (see `EndUserLimits`). */
  endUserLimits?: EndUserLimits;
}

export type ReserveResult =
  | { ok: true; hold: HoldRow; replayed: boolean; alerts: AlertRow[] }
  | {
      ok: false;
      reason: "insufficient_credits";
      availableMicros: number;
      requiredMicros: number;
      alerts: AlertRow[];
    }
  | {
      ok: false;
      reason: "spend_limit";
      limit: SpendLimitScope;
      limitMicros: number;
      committedMicros: number;
      requiredMicros: number;
      alerts: AlertRow[];
    }
  | { ok: false; reason: "conflict"; message: string };

export type SettleResult =
  | {
      ok: true;
      outcome: UsageOutcome;
      replayed: boolean;
      usage: UsageRow;
      /** The usage entry; null when nothing was charged. */
      entry: EntryRow | null;
      /** The part of the charge not covered by an open hold. */
      overrunMicros: number;
      alerts: AlertRow[];
    }
  | { ok: false; reason: "conflict"; message: string }
  | { ok: false; reason: "hold_released"; hold: HoldRow }
  | { ok: false; reason: "no_hold" };

export type ReleaseResult =
  | { ok: true; hold: HoldRow; replayed: boolean }
  | { ok: false; reason: "unknown_request" }
  | { ok: false; reason: "already_resolved"; hold: HoldRow };

export interface ExpireResult {
  /** Holds this call voided, as they are now. */
  expired: HoldRow[];
  /** The earliest expiry among holds still open, for the next alarm; null when none. */
  nextExpiresAt: number | null;
}

/** One ledger's per-call holds; each operation runs in its own store transaction. */
export class CallHolds {
  readonly #book: LedgerBook;
  readonly #limits: SpendLimits;
  readonly #alerts: AlertTriggers;

  constructor(book: LedgerBook, limits: SpendLimits, alerts: AlertTriggers) {
    this.#book = book;
    this.#limits = limits;
    this.#alerts = alerts;
  }

  /**
   * Reserves credits for one request before the model call. Admitted only when
   * `available ≥ amountMicros` and the spend limits allow it. Replaying a request id with the same
   * amount and attribution returns the existing hold while it is open and changes nothing; once the
   * hold is settled, released or expired a replay is a conflict (a resolved hold never admits a new
   * call); different parameters are a conflict. A refusal records nothing but alerts, so the same request
   * id may be retried after a top-up. Returns the alerts that newly fired.
   */
  reserve(input: ReserveInput): ReserveResult {
    assertId(input.requestId, "requestId");
    assertId(input.memberId, "memberId");
    assertPositiveMicros(input.amountMicros, "amountMicros");
    assertEndUserLimits(input.endUserLimits);
    assertTime(input.now, "now");
    assertDuration(input.ttlMs, "ttlMs");
    if (isLeaseId(input.requestId)) {
      return {
        ok: false,
        reason: "conflict",
        message: "a lease is granted by lease(), not reserve()",
      };
    }
    return this.#book.store.transact((): ReserveResult => {
      const existing = this.#book.store.getHold(input.requestId);
      if (existing !== null) {
        const same =
          existing.amountMicros === input.amountMicros &&
          existing.memberId === input.memberId &&
          existing.projectId === input.projectId &&
          existing.sessionId === input.sessionId;
        if (!same) {
          return {
            ok: false,
            reason: "conflict",
            message: `request ${input.requestId} was reserved with different parameters`,
          };
        }
        // A replay answers only while the hold is still open: a settled, released or expired hold
        // admits no further call, or a reused id would run a model call that is never charged.
        if (existing.status !== "open") {
          return {
            ok: false,
            reason: "conflict",
            message: `request ${input.requestId} was already ${existing.status}`,
          };
        }
        return { ok: true, hold: existing, replayed: true, alerts: [] };
      }
      if (this.#book.store.getUsage(input.requestId) !== null) {
        return {
          ok: false,
          reason: "conflict",
          message: `request ${input.requestId} was already settled without a reservation`,
        };
      }

      const { availableMicros } = this.#book.balance();
      if (availableMicros < input.amountMicros) {
        return {
          ok: false,
          reason: "insufficient_credits",
          availableMicros,
          requiredMicros: input.amountMicros,
          alerts: this.#alerts.collect(input.now, alertMember(input), null),
        };
      }

      const limit = this.#limits.exceeded(input.now, input, input.amountMicros);
      if (limit !== null) {
        return {
          ok: false,
          reason: "spend_limit",
          limit: limit.scope,
          limitMicros: limit.limitMicros,
          committedMicros: limit.committedMicros,
          requiredMicros: input.amountMicros,
          alerts: this.#alerts.collect(input.now, alertMember(input), limit.scope),
        };
      }

      const hold = this.#book.openHold({
        requestId: input.requestId,
        amountMicros: input.amountMicros,
        memberId: input.memberId,
        projectId: input.projectId,
        sessionId: input.sessionId,
        createdAt: input.now,
        expiresAt: input.now + input.ttlMs,
      });
      const alerts = this.#alerts.collect(input.now, alertMember(input), null);
      return { ok: true, hold, replayed: false, alerts };
    });
  }

  /**
   * Settles a request to what it actually cost, exactly once. With an open hold: the hold is
   * resolved and the whole `priceMicros` is charged, even above the hold (the overrun is reported).
   * With an expired hold: a late settle, charged without a hold (see the module doc). With a
   * released hold: refused. With no hold: a non-billable request is metered (a usage event at
   * price 0, the balance untouched); a billable one is refused (`no_hold`). Replays with the same
   * parameters return the first result without charging again; different parameters are a conflict.
   */
  settle(input: SettleInput): SettleResult {
    assertSettle(input);

    return this.#book.store.transact((): SettleResult => {
      const previous = this.#book.store.getUsage(input.requestId);
      if (previous !== null) {
        if (!sameSettle(previous, input)) {
          return {
            ok: false,
            reason: "conflict",
            message: `request ${input.requestId} was settled with different parameters`,
          };
        }
        return this.#replayedSettle(previous);
      }

      const hold = this.#book.store.getHold(input.requestId);
      if (hold !== null && isLeaseId(hold.requestId)) {
        return {
          ok: false,
          reason: "conflict",
          message: "a lease is settled by lease(), not settle()",
        };
      }
      if (hold !== null && input.attribution !== undefined && !sameAttribution(hold, input)) {
        return {
          ok: false,
          reason: "conflict",
          message: `request ${input.requestId} was reserved for a different member, project or session`,
        };
      }
      if (hold === null) {
        if (input.billable) return { ok: false, reason: "no_hold" };
        const usage = this.#insertUsage(input, input.attribution ?? null, "metered", null);
        return {
          ok: true,
          outcome: "metered",
          replayed: false,
          usage,
          entry: null,
          overrunMicros: 0,
          alerts: [],
        };
      }
      if (hold.status === "released") return { ok: false, reason: "hold_released", hold };
      if (hold.status === "settled") {
        // settle writes the hold and the usage event in one transaction: one without the other
        // means the store lost a write.
        throw new Error(`hold ${hold.requestId} is settled but has no usage event`);
      }

      const late = hold.status === "expired";
      if (!late) this.#book.resolveHold(hold, "settled", input.now);
      const charge = input.billable ? input.priceMicros : 0;
      let entry: EntryRow | null = null;
      if (charge > 0) {
        entry = this.#book.postEntry({
          kind: "usage",
          amountMicros: -charge,
          idempotencyKey: usageKey(hold.requestId),
          reference: hold.requestId,
          memo: input.model,
          createdAt: usageTime(input),
        });
        this.#book.addSpend(input.now, hold.memberId, hold.projectId, charge);
      }
      const outcome: UsageOutcome = late ? "settled_late" : "settled";
      const usage = this.#insertUsage(input, hold, outcome, hold.amountMicros);
      return {
        ok: true,
        outcome,
        replayed: false,
        usage,
        entry,
        overrunMicros: overrun(outcome, charge, hold.amountMicros),
        alerts: this.#alerts.collect(input.now, hold.memberId, null),
      };
    });
  }

  /**
   * Releases an open hold without charging: the request made no model call. Releasing a released
   * hold is a replay; a settled or expired hold is refused (`already_resolved`).
   */
  release(requestId: string, now: number): ReleaseResult {
    assertId(requestId, "requestId");
    assertTime(now, "now");
    return this.#book.store.transact((): ReleaseResult => {
      const hold = this.#book.store.getHold(requestId);
      if (hold === null) return { ok: false, reason: "unknown_request" };
      if (hold.status === "released") return { ok: true, hold, replayed: true };
      if (hold.status !== "open") return { ok: false, reason: "already_resolved", hold };
      this.#book.resolveHold(hold, "released", now);
      return {
        ok: true,
        hold: { ...hold, status: "released", resolvedAt: now },
        replayed: false,
      };
    });
  }

  /**
   * Voids every open hold whose `expiresAt ≤ now`, returning their credits to `available`. Call it
   * from the Durable Object's alarm and schedule the next alarm at `nextExpiresAt`.
   */
  expire(now: number): ExpireResult {
    assertTime(now, "now");
    return this.#book.store.transact((): ExpireResult => {
      const expired: HoldRow[] = [];
      let nextExpiresAt: number | null = null;
      const open = this.#book.store.listOpenHolds().sort((a, b) => a.expiresAt - b.expiresAt);
      for (const hold of open) {
        if (hold.expiresAt <= now) {
          this.#book.resolveHold(hold, "expired", now);
          expired.push({ ...hold, status: "expired", resolvedAt: now });
        } else if (nextExpiresAt === null || hold.expiresAt < nextExpiresAt) {
          nextExpiresAt = hold.expiresAt;
        }
      }
      return { expired, nextExpiresAt };
    });
  }

  #insertUsage(
    input: SettleInput,
    who: Attribution | null,
    outcome: UsageOutcome,
    holdMicros: number | null,
  ): UsageRow {
    const usage = usageRow(input, who, outcome, holdMicros);
    this.#book.store.insertUsage(usage);
    return usage;
  }

  #replayedSettle(usage: UsageRow): SettleResult {
    const entry = this.#book.store.getEntryByKey(usageKey(usage.requestId));
    return {
      ok: true,
      outcome: usage.outcome,
      replayed: true,
      usage,
      entry,
      overrunMicros: overrun(usage.outcome, usage.priceMicros, usage.holdMicros ?? 0),
      alerts: [],
    };
  }
}

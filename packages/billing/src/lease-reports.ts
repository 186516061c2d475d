/**
 * The account's side of a session's credit lease (docs/2026-12-01-metering-leases.md; the lease's
 * types, its sizing and the session's side are in lease.ts): a report of the calls drawn on the
 * lease, settled each once, then the lease renewed, shrunk or returned, all in one transaction.
 * A lease is a hold like a call's own (call-holds.ts), but it lives across many calls: its calls
 * are charged as they are reported, the part the open lease covers coming out of its hold.
 */

import { type AlertTriggers, alertMember } from "./alert-triggers.ts";
import { assertDuration, assertId, assertTime } from "./input-checks.ts";
import {
  type GrantBounds,
  isLeaseId,
  type LeaseInput,
  type LeaseLimit,
  type LeaseResult,
  type LeaseSettled,
  type LeaseUsage,
  sizeGrant,
} from "./lease.ts";
import type { LedgerBook } from "./ledger-book.ts";
import { HELD, POSTED, spendCounters } from "./ledger-counters.ts";
import type { HoldRow, LedgerStore, NewEntryRow, UsageOutcome, UsageRow } from "./ledger-store.ts";
import { assertNonNegativeMicros, assertPositiveMicros } from "./money.ts";
import {
  type Attribution,
  assertSettle,
  overrun,
  type SettleInput,
  sameSettle,
  usageKey,
  usageRow,
  usageTime,
} from "./settlement.ts";
import {
  assertEndUserLimits,
  type PrincipalLimit,
  type SpendLimitScope,
  type SpendLimits,
} from "./spend-limits.ts";

/** A lease report's lookups and the rows it writes at its end, in one statement each. */
interface ReportBatch {
  /** Usage already settled under a request id: before this report, or earlier in it. */
  known: Map<string, UsageRow>;
  /** Request ids of the report that have a hold of their own (not draws on a lease). */
  ownHolds: Set<string>;
  entries: NewEntryRow[];
  usages: UsageRow[];
}

/** One ledger's leases; each report runs in its own store transaction. */
export class LeaseReports {
  readonly #book: LedgerBook;
  readonly #store: LedgerStore;
  readonly #limits: SpendLimits;
  readonly #alerts: AlertTriggers;

  constructor(book: LedgerBook, limits: SpendLimits, alerts: AlertTriggers) {
    this.#book = book;
    this.#store = book.store;
    this.#limits = limits;
    this.#alerts = alerts;
  }

  /**
   * Reports to a session's lease and renews or returns it, in one transaction
   * (docs/2026-12-01-metering-leases.md). Each reported call is settled exactly once under its own
   * request id: charged in full, the part the open lease covers coming out of the lease's hold (a
   * call after the lease closed is charged late, without a hold: the provider did charge). Then,
   * with `wantMicros > 0`, the lease is sized again (`sizeGrant`: the ask, cut to a fair share of
   * the free balance and to the room under each limit) and its expiry moved on; a grant under
   * `minMicros` is refused and the lease shrinks to what calls in flight drew (`keepMicros`), so
   * the session falls back to per-call holds near any limit. With `wantMicros` 0 the lease is
   * returned: it keeps only `keepMicros`, and closes when that is 0. A closed lease is never
   * reopened: the session asks under a new id.
   */
  report(input: LeaseInput): LeaseResult {
    assertId(input.leaseId, "leaseId");
    assertId(input.memberId, "memberId");
    assertId(input.sessionId, "sessionId");
    if (!isLeaseId(input.leaseId)) throw new RangeError("a lease id starts with 'lease:'");
    assertNonNegativeMicros(input.keepMicros, "keepMicros");
    assertNonNegativeMicros(input.wantMicros, "wantMicros");
    assertPositiveMicros(input.minMicros, "minMicros");
    assertEndUserLimits(input.endUserLimits);
    assertTime(input.now, "now");
    assertDuration(input.ttlMs, "ttlMs");
    const who: Attribution = {
      memberId: input.memberId,
      projectId: input.projectId,
      sessionId: input.sessionId,
    };
    for (const usage of input.usages) {
      assertSettle({ ...usage, now: input.now, attribution: who });
      assertNonNegativeMicros(usage.drawMicros, "drawMicros");
    }
    return this.#store.transact((): LeaseResult => {
      // The counters a report reads and moves, in one read.
      this.#store.loadCounters([
        POSTED,
        HELD,
        ...spendCounters(input.now, who.memberId, who.projectId),
      ]);
      const existing = this.#store.getHold(input.leaseId);
      const same =
        existing === null ||
        (existing.memberId === who.memberId &&
          existing.projectId === who.projectId &&
          existing.sessionId === who.sessionId);
      if (!same) {
        return {
          ok: false,
          reason: "conflict",
          message: `lease ${input.leaseId} belongs to a different member, project or session`,
        };
      }
      const hold = existing;
      const open = hold?.status === "open";
      // The report's entries are written together below; the lots must be opened from the
      // balance before them.
      this.#book.openLots(input.now);
      // What the open lease still holds once the reported calls came out of it; the hold row is
      // written once, below (a hold is never 0: it is resized or closed).
      let current = open ? hold.amountMicros : 0;
      let charged = 0;
      // The report's calls are looked up, and their rows written, a statement for all of them.
      const ids = input.usages.map((usage) => usage.requestId);
      const batch: ReportBatch = {
        known: new Map(this.#store.getUsages(ids).map((row) => [row.requestId, row])),
        ownHolds: new Set(this.#store.getHolds(ids).map((row) => row.requestId)),
        entries: [],
        usages: [],
      };
      const settled = input.usages.map((usage) => {
        const { result, coveredMicros, chargedMicros } = this.#settleOnLease(
          usage,
          input,
          who,
          open,
          current,
          batch,
        );
        current -= coveredMicros;
        charged += chargedMicros;
        return result;
      });
      const inserted = this.#store.insertEntries(batch.entries);
      this.#store.insertUsages(batch.usages);
      // The lots, call by call in the report's order, over one read of them.
      this.#book.lots.takeEach(
        inserted.map((entry) => ({ entrySeq: entry.seq, amountMicros: -entry.amountMicros })),
      );
      // The period's spend, once for the whole report.
      if (charged > 0) this.#book.addSpend(input.now, who.memberId, who.projectId, charged);
      let refusedBy: LeaseLimit | null = null;
      let amount = Math.min(current, input.keepMicros);
      if (input.wantMicros > 0 && (hold === null || hold.status === "open")) {
        // The counters still count the lease at its amount before this report.
        const sized = sizeGrant(input, this.#grantBounds(input, open ? hold.amountMicros : 0));
        refusedBy = sized.refusedBy;
        if (sized.refusedBy === null) amount = input.keepMicros + sized.grantMicros;
      }
      // A lease keeps what calls in flight drew on it, whatever the bounds: they were admitted.
      if (hold?.status === "open") amount = Math.max(amount, input.keepMicros);
      const lease = this.#resizeLease(input, hold, amount);
      return {
        ok: true,
        lease,
        settled,
        refusedBy,
        alerts: this.#alerts.collect(input.now, alertMember(input), null),
      };
    });
  }

  /** The bounds on a lease's grant, as if it held nothing (`current`: what the counters count it at). */
  #grantBounds(input: LeaseInput, current: number): GrantBounds {
    const { availableMicros } = this.#book.balance();
    const otherLeases = this.#store.countOpenLeases() - (current > 0 ? 1 : 0);
    const org = this.#limits.org(input.now);
    const principal = this.#limits.principal(input.now, input);
    const room = (limit: PrincipalLimit) => limit.limitMicros - (limit.committedMicros - current);
    const headroom = (scope: SpendLimitScope): number | null => {
      const limit = principal.find((one) => one.scope === scope);
      return limit === undefined ? null : room(limit);
    };
    const named = new Set<SpendLimitScope>(["member_daily", "end_user_daily", "end_user_monthly"]);
    return {
      freeMicros: availableMicros + current,
      otherLeases,
      orgHeadroomMicros: org === null ? null : room(org),
      memberHeadroomMicros: headroom("member_daily"),
      endUserDailyHeadroomMicros: headroom("end_user_daily"),
      endUserMonthlyHeadroomMicros: headroom("end_user_monthly"),
      ruleHeadroom: principal
        .filter((limit) => !named.has(limit.scope))
        .map((limit) => ({ limit: limit.scope, micros: room(limit) })),
    };
  }

  /** Opens, resizes or closes a lease's hold to `amount`; returns it as it now is (null: closed). */
  #resizeLease(input: LeaseInput, hold: HoldRow | null, amount: number): HoldRow | null {
    const expiresAt = input.now + input.ttlMs;
    if (hold === null) {
      if (amount <= 0) return null;
      return this.#book.openHold({
        requestId: input.leaseId,
        amountMicros: amount,
        memberId: input.memberId,
        projectId: input.projectId,
        sessionId: input.sessionId,
        createdAt: input.now,
        expiresAt,
      });
    }
    if (hold.status !== "open") return null;
    if (amount <= 0) {
      this.#book.resolveHold(hold, "released", input.now);
      return null;
    }
    this.#book.resizeHold(hold, amount, expiresAt);
    return { ...hold, amountMicros: amount, expiresAt };
  }

  /**
   * Settles one call drawn on a lease, once: covered by the open lease as far as it goes. Its rows
   * join the report's `batch`, which also answers whether it was settled before (in this report
   * or an earlier one) or has a hold of its own.
   */
  #settleOnLease(
    usage: LeaseUsage,
    input: LeaseInput,
    who: Attribution,
    open: boolean,
    leftMicros: number,
    batch: ReportBatch,
  ): { result: LeaseSettled; coveredMicros: number; chargedMicros: number } {
    const settle: SettleInput = { ...usage, now: input.now, attribution: who };
    const refused = (message: string) => ({
      result: { requestId: usage.requestId, ok: false, reason: "conflict", message } as const,
      coveredMicros: 0,
      chargedMicros: 0,
    });
    const previous = batch.known.get(usage.requestId);
    if (previous !== undefined) {
      if (!sameSettle(previous, settle)) {
        return refused(`request ${usage.requestId} was settled with different parameters`);
      }
      const overrunMicros = overrun(
        previous.outcome,
        previous.priceMicros,
        previous.holdMicros ?? 0,
      );
      return {
        result: {
          requestId: usage.requestId,
          ok: true,
          outcome: previous.outcome,
          replayed: true,
          overrunMicros,
        },
        coveredMicros: 0,
        chargedMicros: 0,
      };
    }
    if (batch.ownHolds.has(usage.requestId)) {
      return refused(`request ${usage.requestId} has a hold of its own, not a draw on a lease`);
    }
    const charge = usage.billable ? usage.priceMicros : 0;
    const covered = open ? Math.min(charge, leftMicros) : 0;
    if (charge > 0) {
      batch.entries.push({
        kind: "usage",
        amountMicros: -charge,
        balanceAfterMicros: this.#book.addCounter(POSTED, -charge),
        idempotencyKey: usageKey(usage.requestId),
        reference: usage.requestId,
        memo: usage.model,
        createdAt: usageTime(settle),
      });
    }
    const outcome: UsageOutcome = !usage.billable ? "metered" : open ? "settled" : "settled_late";
    const row = usageRow(settle, who, outcome, usage.drawMicros);
    batch.usages.push(row);
    batch.known.set(row.requestId, row);
    return {
      result: {
        requestId: usage.requestId,
        ok: true,
        outcome,
        replayed: false,
        overrunMicros: charge - covered,
      },
      coveredMicros: covered,
      chargedMicros: charge,
    };
  }
}

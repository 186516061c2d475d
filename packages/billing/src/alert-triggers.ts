/**
 * What fires an alert: the ledger's state after each operation, held against the configured
 * thresholds (ledger-config.ts). Spend alerts measure committed spend under the org's monthly
 * limit and a member's daily limit (spend-limits.ts); the low-balance and runway alerts measure
 * the available balance, once per funding. Each alert fires once per key (`ledger_alerts`); the
 * outbox delivers it (alert-outbox.ts) and alerts.ts words it.
 */

import { runwayBelow } from "./forecast.ts";
import type { LedgerBook } from "./ledger-book.ts";
import type { LedgerConfig } from "./ledger-config.ts";
import { utcDay, utcMonth } from "./ledger-counters.ts";
import type { AlertKind, AlertRow } from "./ledger-store.ts";
import type { EndUserLimits, SpendLimitScope, SpendLimits } from "./spend-limits.ts";

/** Whose member alerts a request may fire: none for an end user (they are not members). */
export function alertMember(input: {
  memberId: string;
  endUserLimits?: EndUserLimits;
}): string | null {
  return input.endUserLimits === undefined ? input.memberId : null;
}

function crossed(levelMicros: number, limitMicros: number, pct: number): boolean {
  // level / limit ≥ pct / 100, without rounding or overflow.
  return limitMicros > 0 && BigInt(levelMicros) * 100n >= BigInt(limitMicros) * BigInt(pct);
}

/**
 * An alert's unique key: kind, period, member, threshold and limit value (a new limit re-arms its
 * alerts). A runway alert's "limit" is the balance its days need at the rate of the moment, which
 * moves with every call: its period (threshold and funding) is what it fires once for.
 */
function alertKey(
  alert: Pick<AlertRow, "kind" | "period" | "memberId" | "thresholdPct" | "limitMicros">,
): string {
  return [
    alert.kind,
    alert.period,
    alert.memberId ?? "",
    alert.thresholdPct ?? "",
    alert.kind === "low_runway" ? "" : alert.limitMicros,
  ].join("|");
}

/** One ledger's alerts; `collect` runs inside the operation's transaction, after its writes. */
export class AlertTriggers {
  readonly #book: LedgerBook;
  readonly #limits: SpendLimits;
  readonly #config: LedgerConfig;

  constructor(book: LedgerBook, limits: SpendLimits, config: LedgerConfig) {
    this.#book = book;
    this.#limits = limits;
    this.#config = config;
  }

  /**
   * Records an alert raised outside the ledger's own checks (a failed automatic top-up), once per
   * key like every alert. Returns the new row to deliver, or null if it had fired already.
   */
  raise(alert: Omit<AlertRow, "key" | "firedAt">, now: number): AlertRow | null {
    return this.#book.store.transact(() => this.#fire(alert, now));
  }

  /**
   * Fires the alerts whose threshold the current state has crossed and that have not fired in this
   * period. Spend alerts measure committed spend (settled this period + open holds), the quantity
   * the limits enforce; a refusal by a limit fires its thresholds of 100% and above. Of one limit's
   * thresholds, only the highest crossed fires: a step that crosses 50, 80 and 100% at once fires
   * the 100% alert alone (three alerts at once said the same thing three times), and a lower
   * threshold never fires after a higher one in the same period (spend that dips, as a hold is
   * released, and rises again does not fire the lower ones it skipped). `memberId`: the member
   * whose daily limit to look at (null: none); `refusedBy`: the limit that just refused a call.
   */
  collect(now: number, memberId: string | null, refusedBy: SpendLimitScope | null): AlertRow[] {
    const fired: AlertRow[] = [];
    const { availableMicros } = this.#book.balance();
    const fire = (alert: Omit<AlertRow, "key" | "firedAt">): void => {
      const row = this.#fire(alert, now);
      if (row !== null) fired.push(row);
    };
    const spendAlerts = (
      kind: AlertKind,
      scope: SpendLimitScope,
      limitMicros: number,
      levelMicros: number,
      period: string,
      member: string | null,
    ): void => {
      const series = { kind, period, memberId: member, limitMicros };
      const descending = [...this.#config.alertThresholdsPct].sort((a, b) => b - a);
      const highest = descending.find(
        (pct) => crossed(levelMicros, limitMicros, pct) || (refusedBy === scope && pct >= 100),
      );
      if (highest === undefined) return;
      const higherFired = descending.some(
        (pct) =>
          pct > highest &&
          this.#book.store.getAlert(alertKey({ ...series, thresholdPct: pct })) !== null,
      );
      if (!higherFired) fire({ ...series, thresholdPct: highest, levelMicros });
    };

    const org = this.#limits.org(now);
    if (org !== null) {
      const { limitMicros, committedMicros } = org;
      spendAlerts(
        "org_monthly_spend",
        "org_monthly",
        limitMicros,
        committedMicros,
        utcMonth(now),
        null,
      );
    }
    const memberLimit = this.#config.memberDailyLimitMicros;
    // A member with limits of their own set by an admin is not under the default daily limit.
    if (
      memberLimit !== null &&
      memberId !== null &&
      this.#config.limitRules.rulesFor("member", memberId).length === 0
    ) {
      const level = this.#limits.memberDayCommitted(now, memberId);
      spendAlerts("member_daily_spend", "member_daily", memberLimit, level, utcDay(now), memberId);
    }
    const lowBalance = this.#config.lowBalanceMicros;
    if (lowBalance !== null && availableMicros < lowBalance) {
      fire({
        kind: "low_balance",
        period: `entry-${this.#book.fundingSeq()}`,
        memberId: null,
        thresholdPct: null,
        limitMicros: lowBalance,
        levelMicros: availableMicros,
      });
    }
    const runwayDays = this.#config.runwayAlertDays;
    if (runwayDays !== null) {
      const forecast = this.#book.forecast(now);
      if (runwayBelow(forecast, runwayDays, availableMicros)) {
        fire({
          kind: "low_runway",
          // Once per funding and threshold: a top-up re-arms it, as a new threshold does.
          period: `runway-${runwayDays}d-entry-${this.#book.fundingSeq()}`,
          memberId: null,
          thresholdPct: null,
          limitMicros: forecast.dailyRateMicros * runwayDays,
          levelMicros: availableMicros,
        });
      }
    }
    return fired;
  }

  /** Inserts an alert unless its key fired before; the new row, or null. */
  #fire(alert: Omit<AlertRow, "key" | "firedAt">, now: number): AlertRow | null {
    const key = alertKey(alert);
    if (this.#book.store.getAlert(key) !== null) return null;
    const row: AlertRow = { ...alert, key, firedAt: now };
    this.#book.store.insertAlert(row);
    return row;
  }
}

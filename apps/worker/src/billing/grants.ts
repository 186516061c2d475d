import {
  type AlertRow,
  type Allowance,
  AllowanceStore,
  allowanceGrant,
  allowancePeriod,
  type CreditLedger,
  type EntryRow,
  type GrantSource,
  type GrantTerms,
  type LedgerStore,
  type LotRow,
  lotId,
  type SqlExecutor,
  type UsageRow,
} from "@parley/billing";
import type { Grant } from "@parley/shared";

/** A ledger entry with the grant it funded or expired (the ledger page and its labels). */
export type GrantedEntry = EntryRow & {
  grantId: string | null;
  grantSource: GrantSource | null;
  grantEvent: "granted" | "expired" | null;
};

/** A usage event with the grants its charge came from: `grant-3:promotion:150;grant-1:signup:50`. */
export type GrantedUsageRow = UsageRow & { grants: string };

export type OperatorGrantOutcome =
  | { ok: true; lot: LotRow; replayed: boolean }
  | { ok: false; reason: "conflict"; message: string };

/**
 * A BillingAccount's grants beside its ledger (docs/2026-12-02-billing-features.md, "Credit
 * grants"): the operator's promotions, the monthly allowance, and the alarm's part: expiring what
 * is left of due grants and posting each allowance period once. The ledger does the money; this
 * decides when, and with which terms.
 */
export class AccountGrants {
  readonly #exec: Pick<SqlExecutor, "exec">;
  readonly #store: Pick<LedgerStore, "getLot" | "nextLotExpiry">;
  readonly #ledger: () => CreditLedger;
  readonly #allowance: AllowanceStore;

  constructor(
    exec: Pick<SqlExecutor, "exec">,
    store: Pick<LedgerStore, "getLot" | "nextLotExpiry">,
    ledger: () => CreditLedger,
  ) {
    this.#exec = exec;
    this.#store = store;
    this.#ledger = ledger;
    this.#allowance = new AllowanceStore(exec);
    this.#allowance.migrate();
  }

  /**
   * The alarm's grant work, in this order: what is due expires first (the period that ended takes
   * its allowance with it), then the current period's allowance posts, once per period. Returns
   * the alerts that fired.
   */
  run(now: number): AlertRow[] {
    const alerts = [...this.#ledger().expireGrants(now).alerts];
    const renewed = this.#renew(now);
    if (renewed?.ok) alerts.push(...renewed.alerts);
    return alerts;
  }

  /** When the alarm next has grant work: a grant expiring, or the allowance renewing. */
  nextAt(now: number): number | null {
    const allowance = this.#allowance.get();
    const times = [
      this.#store.nextLotExpiry(),
      allowance === null ? null : allowancePeriod(now, allowance.billingDay).end,
    ].filter((at): at is number => at !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  /** A platform operator's promotion, once per idempotency key (same terms: the first answer). */
  promote(
    input: {
      amountMicros: number;
      expiresAt: number | null;
      priority: number | undefined;
      idempotencyKey: string;
      memo: string | undefined;
    },
    now: number,
  ): OperatorGrantOutcome {
    const terms: GrantTerms = {
      source: "promotion",
      expiresAt: input.expiresAt,
      ...(input.priority === undefined ? {} : { priority: input.priority }),
    };
    const result = this.#ledger().post({
      kind: "grant",
      amountMicros: input.amountMicros,
      // Apart from every other key the ledger uses: an operator's key can never replay a top-up.
      idempotencyKey: `operator:${input.idempotencyKey}`,
      memo: input.memo ?? "Promotion",
      now,
      grant: terms,
    });
    if (!result.ok) {
      return {
        ok: false,
        reason: "conflict",
        message: "idempotencyKey was already used for a grant with other terms",
      };
    }
    const lot = result.entry === null ? null : this.#store.getLot(lotId(result.entry.seq));
    if (lot === null) throw new Error("a posted grant has no lot");
    return { ok: true, lot, replayed: result.replayed };
  }

  allowance(): Allowance | null {
    return this.#allowance.get();
  }

  /**
   * Sets (or, with 0, ends) the monthly allowance, and posts the current period's grant if it has
   * not posted: the allowance starts now. A period already granted keeps its grant; a new amount
   * applies from the next renewal.
   */
  setAllowance(allowance: Allowance, now: number): { nextRenewalAt: number | null } {
    this.#allowance.set(allowance, now);
    this.#renew(now);
    const current = this.#allowance.get();
    return {
      nextRenewalAt: current === null ? null : allowancePeriod(now, current.billingDay).end,
    };
  }

  #renew(now: number) {
    const allowance = this.#allowance.get();
    return allowance === null ? null : this.#ledger().post(allowanceGrant(allowance, now));
  }

  /** The grants with credits left, in draw order, as the balance shows them. */
  list(now: number): Grant[] {
    return this.#ledger().grants(now).map(toGrant);
  }

  /** Marks each usage event with the grants that paid for it (`annotateUsage`). */
  usage(rows: UsageRow[]): GrantedUsageRow[] {
    return annotateUsage(this.#exec, rows);
  }

  /** Marks each entry with the grant it funded or expired. */
  annotate(entries: EntryRow[]): GrantedEntry[] {
    const seqs = JSON.stringify(entries.map((entry) => entry.seq));
    const lots = [
      ...this.#exec.exec(
        `SELECT id, source, entry_seq, expiry_seq FROM ledger_lots
         WHERE entry_seq IN (SELECT value FROM json_each(?1))
            OR expiry_seq IN (SELECT value FROM json_each(?1))`,
        seqs,
      ),
    ];
    const bySeq = new Map<
      number,
      { id: string; source: GrantSource; event: "granted" | "expired" }
    >();
    for (const row of lots) {
      const lot = { id: String(row.id), source: row.source as GrantSource };
      if (typeof row.entry_seq === "number") bySeq.set(row.entry_seq, { ...lot, event: "granted" });
      if (typeof row.expiry_seq === "number")
        bySeq.set(row.expiry_seq, { ...lot, event: "expired" });
    }
    return entries.map((entry) => {
      const lot = bySeq.get(entry.seq);
      return {
        ...entry,
        grantId: lot?.id ?? null,
        grantSource: lot?.source ?? null,
        grantEvent: lot?.event ?? null,
      };
    });
  }
}

/**
 * Marks each usage event with the grants that paid for it (its usage entry's lot shares, in draw
 * order); "" when nothing was charged or no lot covered it (debt).
 */
export function annotateUsage(
  exec: Pick<SqlExecutor, "exec">,
  rows: UsageRow[],
): GrantedUsageRow[] {
  const keys = JSON.stringify(rows.map((row) => `usage:${row.requestId}`));
  const byRequest = new Map<string, string[]>();
  for (const row of exec.exec(
    `SELECT e.reference AS request_id, d.lot_id, l.source, d.micros
     FROM ledger_entries e JOIN ledger_lot_draws d ON d.entry_seq = e.seq
     JOIN ledger_lots l ON l.id = d.lot_id
     WHERE e.idempotency_key IN (SELECT value FROM json_each(?)) ORDER BY e.seq, d.rowid`,
    keys,
  )) {
    const id = String(row.request_id);
    const parts = byRequest.get(id) ?? [];
    parts.push(`${String(row.lot_id)}:${String(row.source)}:${Number(row.micros)}`);
    byRequest.set(id, parts);
  }
  return rows.map((row) => ({ ...row, grants: (byRequest.get(row.requestId) ?? []).join(";") }));
}

export function toGrant(lot: LotRow): Grant {
  return {
    id: lot.id,
    source: lot.source,
    grantedMicros: lot.grantedMicros,
    remainingMicros: lot.remainingMicros,
    expiresAt: lot.expiresAt === null ? null : new Date(lot.expiresAt).toISOString(),
    priority: lot.priority,
  };
}

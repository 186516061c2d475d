/**
 * An org's monthly allowance: N micro-dollars granted at 00:00 UTC of its billing day each month,
 * expiring at the next renewal (so an unused allowance does not pile up). The account's alarm
 * posts each period's grant once: its idempotency key is the period (`allowance:<start day>`).
 * Set only by the platform operator (routes/operator.ts), never by the org's owners or admins,
 * so it lives in its own table, apart from the settings they edit.
 */
import type { PostInput } from "./credits.ts";
import type { SqlExecutor, SqlValue } from "./sql.ts";

export interface Allowance {
  amountMicros: number;
  /** 1 to 28: every month has the day. */
  billingDay: number;
}

export interface AllowancePeriod {
  /** 00:00 UTC of the billing day that began it. */
  start: number;
  /** The next renewal: when this period's grant expires and the next one posts. */
  end: number;
  /** The idempotency key of its grant. */
  key: string;
}

export function assertBillingDay(day: number): void {
  if (!Number.isSafeInteger(day) || day < 1 || day > 28) {
    throw new RangeError("billingDay must be an integer from 1 to 28");
  }
}

/** The allowance period `now` is in: from the latest billing day at or before it. */
export function allowancePeriod(now: number, billingDay: number): AllowancePeriod {
  assertBillingDay(billingDay);
  const date = new Date(now);
  let year = date.getUTCFullYear();
  let month = date.getUTCMonth();
  if (Date.UTC(year, month, billingDay) > now) month -= 1;
  if (month < 0) {
    month = 11;
    year -= 1;
  }
  const start = Date.UTC(year, month, billingDay);
  const end = Date.UTC(year, month + 1, billingDay);
  return { start, end, key: `allowance:${new Date(start).toISOString().slice(0, 10)}` };
}

/** The grant of the period `now` is in (post it with `CreditLedger.post`). */
export function allowanceGrant(allowance: Allowance, now: number): PostInput {
  const period = allowancePeriod(now, allowance.billingDay);
  return {
    kind: "grant",
    amountMicros: allowance.amountMicros,
    idempotencyKey: period.key,
    memo: "Monthly allowance",
    now,
    grant: { source: "monthly_allowance", expiresAt: period.end },
  };
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS grant_allowance (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  amount_micros INTEGER NOT NULL CHECK (amount_micros >= 0),
  billing_day INTEGER NOT NULL CHECK (billing_day BETWEEN 1 AND 28),
  updated_at INTEGER NOT NULL
)`;

/** The allowance's one row, in the BillingAccount's SQLite. */
export class AllowanceStore {
  readonly #exec: SqlExecutor["exec"];

  constructor({ exec }: Pick<SqlExecutor, "exec">) {
    this.#exec = exec;
  }

  #rows(query: string, ...bindings: SqlValue[]): Record<string, unknown>[] {
    return [...this.#exec(query, ...bindings)];
  }

  migrate(): void {
    this.#rows(SCHEMA);
  }

  /** The allowance, or null when none is set (or it was set to 0). */
  get(): Allowance | null {
    const row = this.#rows(
      "SELECT amount_micros, billing_day FROM grant_allowance WHERE id = 1",
    )[0];
    if (row === undefined || row.amount_micros === 0) return null;
    return { amountMicros: Number(row.amount_micros), billingDay: Number(row.billing_day) };
  }

  set(allowance: Allowance, now: number): void {
    assertBillingDay(allowance.billingDay);
    if (!Number.isSafeInteger(allowance.amountMicros) || allowance.amountMicros < 0) {
      throw new RangeError("amountMicros must be a non-negative integer");
    }
    this.#rows(
      `INSERT INTO grant_allowance (id, amount_micros, billing_day, updated_at) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET amount_micros = excluded.amount_micros,
         billing_day = excluded.billing_day, updated_at = excluded.updated_at`,
      allowance.amountMicros,
      allowance.billingDay,
      now,
    );
  }
}

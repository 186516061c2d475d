/**
 * Spend limits on one member or one project, per day, week or month (issue 16.4, 2026-12-02).
 *
 * Beside the org's monthly limit and the default daily limit of every member (the settings), an
 * org's owners and admins set limits on one member (in place of the default) or one project, and a
 * member sets limits on themselves (`own`: on top of whatever an admin set, so they can only
 * lower what they may spend). Each rule is a period and an amount; a subject has at most one rule
 * per period. Periods are UTC calendar periods: a day from 00:00, a week from Monday 00:00, a month
 * from the 1st. The ledger checks every rule that applies at each reserve and lease grant, over
 * counters of settled spend per period plus open holds, as it does for the member day.
 */
import { assertPositiveMicros } from "./money.ts";
import { type SqlExecutor, type SqlValue, sqlRun } from "./sql.ts";

export const LIMIT_PERIODS = ["day", "week", "month"] as const;
export type LimitPeriod = (typeof LIMIT_PERIODS)[number];

/** Who a rule limits: one member (set by an admin), one member by themselves, or one project. */
export const LIMIT_SUBJECTS = ["member", "own", "project"] as const;
export type LimitSubject = (typeof LIMIT_SUBJECTS)[number];

export interface LimitRule {
  subject: LimitSubject;
  /** The member's user id (`member`, `own`) or the project's id. */
  subjectId: string;
  period: LimitPeriod;
  amountMicros: number;
  updatedAt: number;
}

/** What the ledger asks of the rules at a reserve or grant; none when absent. */
export interface LimitRules {
  rulesFor(subject: LimitSubject, subjectId: string): readonly LimitRule[];
}

export const NO_LIMIT_RULES: LimitRules = { rulesFor: () => [] };

const DAY_MS = 86_400_000;

/** The start of the UTC period holding `now` (a week starts on Monday). */
export function periodStart(period: LimitPeriod, now: number): number {
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  switch (period) {
    case "day":
      return midnight;
    case "week":
      // getUTCDay: 0 is Sunday; Monday starts the week (ISO 8601).
      return midnight - ((date.getUTCDay() + 6) % 7) * DAY_MS;
    case "month":
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
}

/** When the period holding `now` ends and its spend starts again from zero. */
export function periodResetsAt(period: LimitPeriod, now: number): number {
  const start = periodStart(period, now);
  switch (period) {
    case "day":
      return start + DAY_MS;
    case "week":
      return start + 7 * DAY_MS;
    case "month": {
      const date = new Date(start);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    }
  }
}

/** A period's name in counter keys: its first day (`2026-11-30`), or the month (`2026-12`). */
export function periodKey(period: LimitPeriod, now: number): string {
  const start = new Date(periodStart(period, now)).toISOString();
  return period === "month" ? start.slice(0, 7) : start.slice(0, 10);
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS limit_rules (
  subject TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  period TEXT NOT NULL,
  amount_micros INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (subject, subject_id, period)
)`;

/**
 * The rules in the BillingAccount's SQLite, read once into memory (a reserve must not query for
 * them): `reload` after any write to the table, the erasure's scrub included.
 */
export class LimitRuleStore implements LimitRules {
  readonly #exec: SqlExecutor["exec"];
  #bySubject = new Map<string, LimitRule[]>();

  constructor({ exec }: Pick<SqlExecutor, "exec">) {
    this.#exec = exec;
  }

  #run(query: string, ...bindings: SqlValue[]): void {
    sqlRun(this.#exec, query, ...bindings);
  }

  migrate(): void {
    this.#run(SCHEMA);
    this.reload();
  }

  reload(): void {
    this.#bySubject = new Map();
    for (const rule of this.list()) {
      const key = `${rule.subject}:${rule.subjectId}`;
      this.#bySubject.set(key, [...(this.#bySubject.get(key) ?? []), rule]);
    }
  }

  rulesFor(subject: LimitSubject, subjectId: string): readonly LimitRule[] {
    return this.#bySubject.get(`${subject}:${subjectId}`) ?? [];
  }

  /** Every rule, by subject, id and period. */
  list(): LimitRule[] {
    return [...this.#exec("SELECT * FROM limit_rules ORDER BY subject, subject_id, period")].map(
      (row) => ({
        subject: row.subject as LimitSubject,
        subjectId: row.subject_id as string,
        period: row.period as LimitPeriod,
        amountMicros: row.amount_micros as number,
        updatedAt: row.updated_at as number,
      }),
    );
  }

  /** Removes every rule of these subjects (an erased project's). */
  dropSubjects(subject: LimitSubject, subjectIds: readonly string[]): void {
    if (subjectIds.length === 0) return;
    this.#run(
      "DELETE FROM limit_rules WHERE subject = ? AND subject_id IN (SELECT value FROM json_each(?))",
      subject,
      JSON.stringify(subjectIds),
    );
    this.reload();
  }

  /** Sets (amount) or removes (null) one subject's rule for one period. */
  put(
    rule: Omit<LimitRule, "amountMicros" | "updatedAt"> & { amountMicros: number | null },
    now: number,
  ): void {
    if (rule.amountMicros === null) {
      this.#run(
        "DELETE FROM limit_rules WHERE subject = ? AND subject_id = ? AND period = ?",
        rule.subject,
        rule.subjectId,
        rule.period,
      );
    } else {
      assertPositiveMicros(rule.amountMicros, "amountMicros");
      this.#run(
        `INSERT INTO limit_rules (subject, subject_id, period, amount_micros, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (subject, subject_id, period) DO UPDATE SET amount_micros = excluded.amount_micros, updated_at = excluded.updated_at`,
        rule.subject,
        rule.subjectId,
        rule.period,
        rule.amountMicros,
        now,
      );
    }
    this.reload();
  }
}

/**
 * Erasure: replaces a member's id with its pseudonym wherever a BillingAccount stores it: as a
 * column (usage, holds, alerts, rollups) and inside keys (alert keys, the alert outbox, the daily
 * spend counters `spend:member:<day>:<id>`). Entries and amounts are untouched (financial records
 * are kept), so every total stays the same. Idempotent; the caller runs it in one transaction.
 */
export function pseudonymizeMember(
  sql: SqlStorage,
  memberId: string,
  pseudonym: string,
): { rows: number } {
  let rows = 0;
  for (const table of [
    "usage_events",
    "ledger_holds",
    "ledger_alerts",
    "usage_by_dimension",
    "usage_session_totals",
    "usage_session_span",
  ]) {
    rows += sql.exec(
      `UPDATE ${table} SET member_id = ? WHERE member_id = ?`,
      pseudonym,
      memberId,
    ).rowsWritten;
  }
  for (const [table, column] of [
    ["ledger_alerts", "key"],
    ["alert_outbox", "key"],
    ["ledger_counters", "name"],
  ] as const) {
    rows += sql.exec(
      `UPDATE ${table} SET ${column} = replace(${column}, ?1, ?2) WHERE instr(${column}, ?1) > 0`,
      memberId,
      pseudonym,
    ).rowsWritten;
  }
  return { rows };
}

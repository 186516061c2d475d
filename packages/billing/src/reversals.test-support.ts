// Test support only (not exported): a ledger and the reversals' tables over Node's SQLite.
import { CreditLedger } from "./ledger.ts";
import { nodeSqliteExecutor } from "./node-sqlite-executor.test-support.ts";
import { type ReversalReport, ReversalStore } from "./reversals.ts";
import { SqlLedgerStore } from "./sql-ledger-store.ts";

const NOW = Date.UTC(2026, 11, 6, 12);

/** A ledger and the reversals' tables in one SQLite database, as in a BillingAccount. */
export function reversalAccount(now = NOW) {
  const executor = nodeSqliteExecutor();
  const store = new SqlLedgerStore(executor);
  store.migrate();
  const reversals = new ReversalStore(executor);
  reversals.migrate();
  const ledger = new CreditLedger(store);
  const pay = (paymentRef: string, micros: number) =>
    ledger.post({
      kind: "topup",
      amountMicros: micros,
      idempotencyKey: `stripe:payment-intent:${paymentRef}`,
      reference: paymentRef,
      now,
      grant: { source: "top_up", fundingRef: paymentRef },
    });
  const report = (r: ReversalReport) => reversals.apply(ledger, store, r, now);
  return { store, ledger, reversals, pay, report };
}

import {
  AccountStore,
  AlertOutbox,
  type CreditLedger,
  createUsageRollups,
  LEDGER_SQLITE_SCHEMA,
  type LedgerConfig,
  LimitRuleStore,
  ReversalStore,
  type SqlExecutor,
  SqlLedgerStore,
} from "@parley/billing";
import { mailAlerts } from "../mail/billing-mail.ts";
import { AccountAlarm } from "./account-alarm.ts";
import { AccountStripe } from "./account-stripe.ts";
import { AlertWebhook } from "./alert-webhook.ts";
import { AccountAutoTopUp } from "./auto-top-up.ts";
import { AccountGrants } from "./grants.ts";
import { LeaseHolders } from "./lease-holders.ts";

/** What a BillingAccount is made of, over its one SQLite database (billing-account.ts). */
export interface AccountParts {
  sql: SqlStorage;
  /** The object's SQLite as the package's queries take it. */
  exec: Pick<SqlExecutor, "exec">;
  /** Settings, Stripe events applied, preview turns. */
  account: AccountStore;
  store: SqlLedgerStore;
  /** Limits on one member or project, per day, week or month (read into memory). */
  rules: LimitRuleStore;
  /** Alerts to deliver to the org's webhook: an outbox drained by the alarm, with retries. */
  outbox: AlertOutbox;
  webhook: AlertWebhook;
  /** Promotions, the monthly allowance and expiry (grants.ts). */
  grants: AccountGrants;
  /** A saved card charged off-session when the balance falls below a threshold (auto-top-up.ts). */
  autoTopUp: AccountAutoTopUp;
  /** Verified Stripe events: credits and capped reversals (account-stripe.ts). */
  stripe: AccountStripe;
  alarm: AccountAlarm;
  /**
   * Sessions holding leases: they report before a read, and give their leases back when a limit
   * changes or a call is refused.
   */
  leaseHolders: LeaseHolders;
}

/**
 * Creates the account's tables (each store migrates its own) and wires its parts together. The
 * ledger is asked for anew each time (`ledger`): it is rebuilt when a setting changes.
 */
export function accountParts(
  ctx: DurableObjectState,
  env: Env,
  ledger: () => CreditLedger,
): AccountParts {
  const sql = ctx.storage.sql;
  const exec: Pick<SqlExecutor, "exec"> = {
    exec: (query, ...bindings) => sql.exec(query, ...bindings),
  };
  for (const statement of LEDGER_SQLITE_SCHEMA) sql.exec(statement);
  const account = new AccountStore(exec);
  account.migrate();
  const rules = new LimitRuleStore(exec);
  rules.migrate();
  // Usage summed per UTC day for the groupings (packages/billing/src/usage-rollups.ts).
  createUsageRollups(exec);
  const outbox = new AlertOutbox(exec);
  outbox.migrate();
  let depth = 0;
  const transact = <T>(fn: () => T): T => {
    // transactionSync does not nest: an inner call joins the outer transaction.
    if (depth > 0) return fn();
    depth++;
    try {
      return ctx.storage.transactionSync(fn);
    } finally {
      depth--;
    }
  };
  const store = new SqlLedgerStore({ ...exec, transact });
  const grants = new AccountGrants(exec, store, ledger);
  // Alert mail goes after the ledger's transaction, off its path (mail/billing-mail.ts).
  const webhook = new AlertWebhook(env, account, store, outbox, (alerts) => {
    const orgId = account.orgId();
    if (orgId) ctx.waitUntil(mailAlerts(env, orgId, alerts).catch(() => 0));
  });
  const autoTopUp = new AccountAutoTopUp({
    env,
    exec,
    ledger,
    orgId: () => account.orgId(),
    transact,
    wake: (at) => alarm.fireBy(at),
    queue: (alerts, now) => webhook.queue(alerts, now),
  });
  const reversals = new ReversalStore(exec);
  reversals.migrate();
  const stripe = new AccountStripe({
    account,
    store,
    reversals,
    autoTopUp,
    webhook,
    ledger,
    transact,
    wake: (at) => alarm.fireBy(at),
  });
  const alarm = new AccountAlarm(ctx.storage, outbox, [grants, autoTopUp]);
  const leaseHolders = new LeaseHolders(sql, store, env);
  return {
    sql,
    exec,
    account,
    store,
    rules,
    outbox,
    webhook,
    grants,
    autoTopUp,
    stripe,
    alarm,
    leaseHolders,
  };
}

/** The ledger's configuration from the account's settings and limit rules. */
export function ledgerConfig(
  parts: Pick<AccountParts, "account" | "rules">,
): Partial<LedgerConfig> {
  const { orgMonthlyLimitMicros, memberDailyLimitMicros, lowBalanceMicros, runwayAlertDays } =
    parts.account.settings();
  return {
    orgMonthlyLimitMicros,
    memberDailyLimitMicros,
    lowBalanceMicros,
    runwayAlertDays,
    limitRules: parts.rules,
  };
}

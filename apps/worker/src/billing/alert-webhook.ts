import {
  type AccountStore,
  type AlertOutbox,
  type AlertRow,
  alertMessage,
  alertPeriodLabel,
  type LedgerStore,
} from "@parley/billing";
import { signAlert } from "./alert-signature.ts";
import { checkWebhookUrl } from "./webhook-url.ts";

/**
 * The org's alert webhook, as its BillingAccount feeds it: alerts the ledger fired are queued in
 * the outbox, and the account's alarm delivers the due ones, signed, to the URL in the settings.
 */
export class AlertWebhook {
  readonly #env: Env;
  readonly #account: AccountStore;
  readonly #store: Pick<LedgerStore, "getAlert">;
  readonly #outbox: AlertOutbox;
  /** Told of every alert fired, webhook or not: the owners' alert mail (mail/billing-mail.ts). */
  readonly #onFired: (alerts: readonly AlertRow[]) => void;

  constructor(
    env: Env,
    account: AccountStore,
    store: Pick<LedgerStore, "getAlert">,
    outbox: AlertOutbox,
    onFired: (alerts: readonly AlertRow[]) => void = () => {},
  ) {
    this.#env = env;
    this.#account = account;
    this.#store = store;
    this.#outbox = outbox;
    this.#onFired = onFired;
  }

  /** Queues alerts for delivery; true when anything was queued. */
  queue(alerts: readonly AlertRow[], now: number): boolean {
    if (alerts.length > 0) this.#onFired(alerts);
    if (alerts.length === 0 || !this.#account.settings().alertWebhookUrl) return false;
    this.#outbox.queue(alerts, now);
    return true;
  }

  async deliver(now: number): Promise<void> {
    const url = this.#account.settings().alertWebhookUrl;
    if (!url) {
      this.#outbox.park("the alert webhook URL was removed", now);
      return;
    }
    // Checked again before each delivery: a URL saved before a rule changed is not trusted either.
    const allowed = checkWebhookUrl(url, this.#env.ALERT_WEBHOOK_ALLOW_PRIVATE ?? "");
    if (!allowed.ok) {
      this.#outbox.park(`the alert webhook URL is refused: it ${allowed.reason}`, now);
      return;
    }
    const orgId = this.#account.orgId();
    // Claim the batch before the first await: an alarm retried or run twice meanwhile skips these
    // rows instead of delivering them a second time.
    const due = this.#outbox.claimDue(now);
    for (const row of due) {
      const alert = this.#store.getAlert(row.key);
      if (!alert) {
        this.#outbox.park("the alert no longer exists", now, row.key);
        continue;
      }
      // Additive since 2026-12-01: the sentence and the readable period; `period` stays the key.
      const body = JSON.stringify({
        type: "billing.alert",
        orgId,
        alert: { ...alert, message: alertMessage(alert), periodLabel: alertPeriodLabel(alert) },
      });
      let deliveredAt: number | null = null;
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "parley-signature": await signAlert(this.#env.ALERT_WEBHOOK_SECRET, body, now),
          },
          body,
          // A redirect could lead anywhere, a private address included: delivery stops at the URL.
          redirect: "manual",
        });
        if (response.ok) deliveredAt = Date.now();
      } catch {
        // A network failure is a failed attempt, retried with backoff.
      }
      this.#outbox.recordAttempt(row, deliveredAt, now);
    }
  }
}

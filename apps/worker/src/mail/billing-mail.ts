import { type AlertRow, alertMessage } from "@parley/billing";
import { config } from "../env.ts";
import { mailOutbox, queueMailStatement } from "./outbox.ts";

/**
 * Billing mail for owners who asked for it (`memberships.mail_receipts`, `mail_limit_alerts`;
 * routes/me-mail.ts): a receipt when a Stripe top-up is credited, and each limit alert the
 * ledger fires. Sent to the org's owners at the moment it happens (a member no longer an owner
 * gets none), at verified addresses only. One mail per owner and event however often the caller
 * runs (`dedupe_key`): the webhook is retried, the alarm may fire an alert twice.
 */

interface Owner {
  id: string;
  email: string;
  org_name: string;
}

async function optedInOwners(
  db: D1Database,
  orgId: string,
  column: "mail_receipts" | "mail_limit_alerts",
): Promise<Owner[]> {
  const { results } = await db
    .prepare(
      `SELECT u.id, u.email, o.name AS org_name FROM memberships m
       JOIN users u ON u.id = m.user_id JOIN organizations o ON o.id = m.org_id
       WHERE m.org_id = ? AND m.role = 'owner' AND m.${column} = 1
         AND u.email_verified_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = u.id)`,
    )
    .bind(orgId)
    .all<Owner>();
  return results;
}

/** The billing page, where both mails lead; none when PUBLIC_URL is not set (then the text says where). */
const billingLink = (env: Env): string | null => {
  const base = config(env).publicUrl;
  return base ? `${base.replace(/\/+$/, "")}/billing` : null;
};

/** Writes the mails in one batch, retried once (a mail is never worth failing the caller). */
async function queueAll(env: Env, statements: D1PreparedStatement[]): Promise<number> {
  if (statements.length === 0) return 0;
  try {
    await env.DB.batch(statements);
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      await env.DB.batch(statements);
    } catch {
      console.error(JSON.stringify({ level: "error", source: "mail", outcome: "not_queued" }));
      return 0;
    }
  }
  await mailOutbox(env)
    .kick()
    .catch(() => undefined);
  return statements.length;
}

/** Receipts of a credited top-up to the org's opted-in owners. */
export async function mailReceipts(
  env: Env,
  orgId: string,
  payment: { paymentIntentId: string; amountMicros: number; automatic: boolean },
): Promise<number> {
  const owners = await optedInOwners(env.DB, orgId, "mail_receipts");
  const link = billingLink(env);
  const statements = await Promise.all(
    owners.map((owner) =>
      queueMailStatement(env, {
        kind: "receipt",
        to: owner.email,
        userId: owner.id,
        orgId,
        dedupeKey: `receipt:${payment.paymentIntentId}:${owner.id}`,
        data: {
          orgName: owner.org_name,
          amountMicros: payment.amountMicros,
          automatic: payment.automatic,
          link,
        },
      }),
    ),
  );
  return queueAll(env, statements);
}

/** The alerts the ledger fired, to the org's opted-in owners. */
export async function mailAlerts(
  env: Env,
  orgId: string,
  alerts: readonly AlertRow[],
): Promise<number> {
  if (alerts.length === 0) return 0;
  const owners = await optedInOwners(env.DB, orgId, "mail_limit_alerts");
  const link = billingLink(env);
  const statements = await Promise.all(
    alerts.flatMap((alert) =>
      owners.map((owner) =>
        queueMailStatement(env, {
          kind: "limit_alert",
          to: owner.email,
          userId: owner.id,
          orgId,
          dedupeKey: `alert:${orgId}:${alert.key}:${owner.id}`,
          data: { orgName: owner.org_name, message: alertMessage(alert), link },
        }),
      ),
    ),
  );
  return queueAll(env, statements);
}

import { billingAccount } from "../billing/account.ts";
import { iso } from "../db/pagination.ts";

/** How an archive's sections read D1 and the org's BillingAccount (sections.ts, org-sections.ts). */

export const ID_LIST = "(SELECT value FROM json_each(?))";

export async function all<T>(db: D1Database, sql: string, ...bindings: unknown[]): Promise<T[]> {
  const { results } = await db
    .prepare(sql)
    .bind(...bindings)
    .all<T>();
  return results;
}

export const live = (alias: string) =>
  `${alias}.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id = ${alias}.id)`;

export const USAGE_PAGE = 500;

export async function usageOf(env: Env, orgId: string, memberId?: string) {
  const account = billingAccount(env, orgId);
  const rows = [];
  let after: { createdAt: number; requestId: string } | undefined;
  const to = Date.now() + 1;
  for (;;) {
    const page = await account.usageRows({
      from: 0,
      to,
      limit: USAGE_PAGE,
      ...(memberId ? { memberId } : {}),
      ...(after ? { after } : {}),
    });
    rows.push(...page.map((u) => ({ ...u, orgId, createdAt: iso(u.createdAt) })));
    const last = page.at(-1);
    if (page.length < USAGE_PAGE || !last) break;
    after = { createdAt: last.createdAt, requestId: last.requestId };
  }
  return rows;
}

export async function ledgerOf(env: Env, orgId: string, references?: Set<string>) {
  const account = billingAccount(env, orgId);
  const rows = [];
  let before: number | null = null;
  for (;;) {
    const page = await account.entries(before, USAGE_PAGE);
    for (const e of page) {
      if (references && !(e.reference && references.has(e.reference))) continue;
      rows.push({ ...e, orgId, createdAt: iso(e.createdAt) });
    }
    const last = page.at(-1);
    if (page.length < USAGE_PAGE || !last) break;
    before = last.seq;
  }
  return rows.reverse();
}

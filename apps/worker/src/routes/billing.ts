import { alertMessage, alertPeriodLabel, type UsageRow } from "@parley/billing";
import {
  type ActivityItem,
  type ActivityPage,
  AppError,
  activityQuerySchema,
  type BillingAlert,
  type BillingSummary,
  billingSettingsSchema,
  checkoutSchema,
  type LedgerEntry,
  pageQuerySchema,
  type UsageGroup,
  type UsageGroupBy,
  type UsageReport,
  usageQuerySchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import Stripe from "stripe";
import { atLeast, notFound, orgAccess, requireRole } from "../auth/access.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { billingAccount, openBillingAccount } from "../billing/account.ts";
import { usageGroups } from "../billing/billing-account.ts";
import { type Labels, resolveLabels } from "../billing/labels.ts";
import { isIdempotencyConflict, stripeClient } from "../billing/stripe.ts";
import { checkWebhookUrl } from "../billing/webhook-url.ts";
import { auditStatement } from "../db/audit.ts";
import { iso } from "../db/pagination.ts";
import { config } from "../env.ts";
import type { AppEnv, OrgAccess } from "../http/context.ts";
import { jsonBody, query } from "../http/validate.ts";

const CSV_PAGE = 1000;

/** Members see only their own usage; owners and admins see the org's, optionally one member's. */
function usageMember(
  access: OrgAccess,
  userId: string,
  requested: string | undefined,
): string | undefined {
  if (atLeast(access.role, "admin")) return requested;
  if (requested !== undefined && requested !== userId) {
    throw new AppError("forbidden", "Members can only see their own usage");
  }
  return userId;
}

/**
 * Where Checkout and the portal send the browser back to: PUBLIC_URL. The request's own origin is
 * used only when PUBLIC_URL is empty and the Worker was reached on a loopback host (`pnpm dev` on
 * 127.0.0.1): that origin comes from the Host header, which any client sets, so with
 * `Host: evil.example` Stripe sent the payer (and, in the success URL, the Checkout session id) to
 * evil.example. A loopback host can only point back at the payer's own machine. Anywhere else an
 * empty PUBLIC_URL is a deployment mistake: answered 500 (the log says why) before anything is
 * created at Stripe, rather than guessed from the request.
 */
function returnBase(c: Context<AppEnv>): string {
  const configured = config(c.env).publicUrl;
  if (configured) return configured.replace(/\/+$/, "");
  const url = new URL(c.req.url);
  const host = url.hostname;
  const loopback = host === "localhost" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host);
  if (!loopback) {
    throw new AppError(
      "internal",
      "Billing is not configured on this server (PUBLIC_URL is not set)",
    );
  }
  return url.origin;
}

/** The label of a usage group's key, by what the usage is grouped by. */
function groupLabel(labels: Labels, groupBy: UsageGroupBy, key: string | null): string {
  switch (groupBy) {
    case "member":
      return labels.member(key);
    case "project":
      return labels.project(key);
    case "session":
      return labels.session(key);
    default:
      return key ?? "";
  }
}

/** The ids of a page of usage events, for one label lookup. */
const idsOf = (rows: readonly UsageRow[]) => ({
  members: rows.map((row) => row.memberId),
  projects: rows.map((row) => row.projectId),
  sessions: rows.map((row) => row.sessionId),
});

const csvField = (value: string | number | null): string => {
  const text = value === null ? "" : String(value);
  // Quote everything that could break a row, and defuse spreadsheet formulas.
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
};

/** Billing of one org (routes under /api/orgs/:orgId/billing). */
export const billing = new Hono<AppEnv>()
  /** Balance and settings. Any member may read the balance; the assistant's tools do too. */
  .get("/:orgId/billing", async (c) => {
    const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
    await openBillingAccount(c.env, access.orgId);
    const account = await billingAccount(c.env, access.orgId).balance();
    return c.json({
      orgId: access.orgId,
      currency: "usd",
      availableMicros: account.availableMicros,
      heldMicros: account.heldMicros,
      postedMicros: account.postedMicros,
      ...account.settings,
    } satisfies BillingSummary);
  })

  .patch("/:orgId/billing/settings", jsonBody(billingSettingsSchema), async (c) => {
    const { userId } = c.get("caller");
    const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
    requireRole(access, "admin");
    const patch = c.req.valid("json");
    if (typeof patch.alertWebhookUrl === "string") {
      // Checked before the account is addressed: the alarm POSTs to this URL from inside.
      const check = checkWebhookUrl(patch.alertWebhookUrl, c.env.ALERT_WEBHOOK_ALLOW_PRIVATE ?? "");
      if (!check.ok) {
        throw new AppError("invalid_request", `alertWebhookUrl: ${check.reason}`, {
          field: "alertWebhookUrl",
        });
      }
    }
    const settings = await billingAccount(c.env, access.orgId).updateSettings(access.orgId, patch);
    await auditStatement(c.env.DB, {
      orgId: access.orgId,
      actorId: userId,
      action: "billing.settings_changed",
      subjectType: "org",
      subjectId: access.orgId,
      data: Object.fromEntries(Object.keys(patch).map((key) => [key, true])),
    }).run();
    return c.json(settings);
  })

  /** The append-only ledger, newest first (owners and admins). */
  .get("/:orgId/billing/ledger", query(pageQuerySchema), async (c) => {
    const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
    requireRole(access, "admin");
    const { cursor, limit } = c.req.valid("query");
    // A cursor is a ledger sequence number as this list wrote it: digits only, so "0x10" or "1e3"
    // is refused rather than read as another number.
    const before =
      cursor === undefined ? null : /^[1-9]\d{0,15}$/.test(cursor) ? Number(cursor) : NaN;
    if (before !== null && !Number.isSafeInteger(before)) {
      throw new AppError("invalid_request", "query.cursor: not a cursor from this list", {
        field: "query.cursor",
      });
    }
    const rows = await billingAccount(c.env, access.orgId).entries(before, limit + 1);
    const page = rows.slice(0, limit);
    return c.json({
      items: page.map(
        (entry): LedgerEntry => ({
          id: String(entry.seq),
          kind: entry.kind,
          amountMicros: entry.amountMicros,
          balanceAfterMicros: entry.balanceAfterMicros,
          reference: entry.reference,
          memo: entry.memo,
          createdAt: iso(entry.createdAt),
        }),
      ),
      nextCursor: rows.length > limit ? String(page.at(-1)?.seq) : null,
    });
  })

  .get("/:orgId/billing/usage", query(usageQuerySchema), async (c) => {
    const { userId } = c.get("caller");
    const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
    const q = c.req.valid("query");
    const memberId = usageMember(access, userId, q.memberId);
    const groups = usageGroups(
      await billingAccount(c.env, access.orgId).usage({
        from: q.from,
        to: q.to,
        groupBy: q.groupBy,
        ...(memberId === undefined ? {} : { memberId }),
      }),
    );
    // Names for the keys, in one D1 query for the whole report (it is one page).
    const keys = groups.map((group) => group.key);
    const labels = await resolveLabels(c.env.DB, access.orgId, {
      ...(q.groupBy === "member" ? { members: keys } : {}),
      ...(q.groupBy === "project" ? { projects: keys } : {}),
      ...(q.groupBy === "session" ? { sessions: keys } : {}),
    });
    const items = groups.map(
      (group): UsageGroup => ({ ...group, label: groupLabel(labels, q.groupBy, group.key) }),
    );
    const totals = items.reduce(
      (sum, item) => ({
        requests: sum.requests + item.requests,
        billableRequests: sum.billableRequests + item.billableRequests,
        promptTokens: sum.promptTokens + item.promptTokens,
        completionTokens: sum.completionTokens + item.completionTokens,
        cachedPromptTokens: sum.cachedPromptTokens + item.cachedPromptTokens,
        reasoningTokens: sum.reasoningTokens + item.reasoningTokens,
        costMicros: sum.costMicros + item.costMicros,
        priceMicros: sum.priceMicros + item.priceMicros,
      }),
      {
        requests: 0,
        billableRequests: 0,
        promptTokens: 0,
        completionTokens: 0,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
        costMicros: 0,
        priceMicros: 0,
      },
    );
    return c.json({
      from: iso(q.from),
      to: iso(q.to),
      groupBy: q.groupBy,
      items,
      nextCursor: null,
      totals,
    } satisfies UsageReport);
  })

  /** Every usage event of the window as CSV, streamed page by page from the Durable Object. */
  .get("/:orgId/billing/usage.csv", query(usageQuerySchema), async (c) => {
    const { userId } = c.get("caller");
    const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
    const q = c.req.valid("query");
    const memberId = usageMember(access, userId, q.memberId);
    const account = billingAccount(c.env, access.orgId);
    const columns = [
      "created_at",
      "request_id",
      "member_id",
      "project_id",
      "session_id",
      "model",
      "prompt_tokens",
      "completion_tokens",
      "cached_prompt_tokens",
      "reasoning_tokens",
      "cost_micros",
      "price_micros",
      "billable",
      // Since 2026-12-01, at the end so that readers of the older columns are unaffected.
      "member_label",
      "project_label",
      "session_label",
    ];
    const encoder = new TextEncoder();
    let after: { createdAt: number; requestId: string } | undefined;
    let started = false;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(encoder.encode(`${columns.join(",")}\n`));
          return;
        }
        const rows = await account.usageRows({
          from: q.from,
          to: q.to,
          limit: CSV_PAGE,
          ...(memberId === undefined ? {} : { memberId }),
          ...(after === undefined ? {} : { after }),
        });
        // One D1 query per page of rows, whatever the page names.
        const labels = await resolveLabels(c.env.DB, access.orgId, idsOf(rows));
        const text = rows
          .map((row) =>
            [
              iso(row.createdAt),
              row.requestId,
              row.memberId,
              row.projectId,
              row.sessionId,
              row.model,
              row.promptTokens,
              row.completionTokens,
              row.cachedPromptTokens,
              row.reasoningTokens,
              row.costMicros,
              row.priceMicros,
              row.billable,
              labels.member(row.memberId),
              row.projectId === null ? "" : labels.project(row.projectId),
              row.sessionId === null ? "" : labels.session(row.sessionId),
            ]
              .map(csvField)
              .join(","),
          )
          .join("\n");
        if (text) controller.enqueue(encoder.encode(`${text}\n`));
        const last = rows.at(-1);
        if (rows.length < CSV_PAGE || !last) controller.close();
        else after = { createdAt: last.createdAt, requestId: last.requestId };
      },
    });
    return new Response(stream, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="usage-${access.orgId}.csv"`,
      },
    });
  })

  /**
   * Every provider call (usage event), newest first, with names for its member, project and
   * session. Owners and admins see the org's, filtered as they like; a member sees only their own
   * (naming another member is refused, as for usage).
   */
  .get("/:orgId/billing/activity", query(activityQuerySchema), async (c) => {
    const { userId } = c.get("caller");
    const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
    const q = c.req.valid("query");
    const memberId = usageMember(access, userId, q.member);
    const before = q.cursor === undefined ? undefined : keysetCursor(q.cursor);
    const rows = await billingAccount(c.env, access.orgId).activityRows({
      from: q.from ?? 0,
      to: q.to ?? Date.now() + 1,
      limit: q.limit + 1,
      ...(memberId === undefined ? {} : { memberId }),
      ...(q.project === undefined ? {} : { projectId: q.project }),
      ...(q.session === undefined ? {} : { sessionId: q.session }),
      ...(q.model === undefined ? {} : { model: q.model }),
      ...(before === undefined ? {} : { before: { createdAt: before.at, requestId: before.key } }),
    });
    const page = rows.slice(0, q.limit);
    const labels = await resolveLabels(c.env.DB, access.orgId, idsOf(page));
    const last = page.at(-1);
    return c.json({
      items: page.map(
        (row): ActivityItem => ({
          id: row.requestId,
          createdAt: iso(row.createdAt),
          member:
            row.memberId === null ? null : { id: row.memberId, label: labels.member(row.memberId) },
          project:
            row.projectId === null
              ? null
              : { id: row.projectId, label: labels.project(row.projectId) },
          session:
            row.sessionId === null
              ? null
              : { id: row.sessionId, label: labels.session(row.sessionId) },
          model: row.model,
          promptTokens: row.promptTokens,
          completionTokens: row.completionTokens,
          cachedPromptTokens: row.cachedPromptTokens,
          reasoningTokens: row.reasoningTokens,
          costMicros: row.costMicros,
          priceMicros: row.priceMicros,
          billable: row.billable === 1,
        }),
      ),
      nextCursor: rows.length > q.limit && last ? `${last.createdAt}.${last.requestId}` : null,
    } satisfies ActivityPage);
  })

  /** Threshold alerts that fired, newest first, with their webhook delivery state (owners and admins). */
  .get("/:orgId/billing/alerts", query(pageQuerySchema), async (c) => {
    const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
    requireRole(access, "admin");
    const { cursor, limit } = c.req.valid("query");
    const after = cursor === undefined ? undefined : keysetCursor(cursor);
    const before = after && { firedAt: after.at, key: after.key };
    const rows = await billingAccount(c.env, access.orgId).alerts(limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return c.json({
      items: page.map(
        (alert): BillingAlert => ({
          ...alert,
          // Readable since 2026-12-01; the internal key stays as `periodKey`.
          period: alertPeriodLabel(alert),
          periodKey: alert.period,
          message: alertMessage(alert),
          firedAt: iso(alert.firedAt),
          deliveredAt: alert.deliveredAt === null ? null : iso(alert.deliveredAt),
        }),
      ),
      nextCursor: rows.length > limit && last ? `${last.firedAt}.${last.key}` : null,
    });
  })

  /**
   * Starts a Stripe Checkout top-up. The amount is only a request: credits are granted by the
   * verified webhook, for what Stripe says was paid.
   */
  .post("/:orgId/billing/checkout", jsonBody(checkoutSchema), async (c) => {
    const { userId } = c.get("caller");
    const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
    requireRole(access, "admin");
    const { amountMicros } = c.req.valid("json");
    const cfg = config(c.env);
    if (amountMicros < cfg.checkoutMinMicros || amountMicros > cfg.checkoutMaxMicros) {
      throw new AppError(
        "invalid_request",
        `amountMicros: must be between ${cfg.checkoutMinMicros} and ${cfg.checkoutMaxMicros}`,
        { field: "amountMicros" },
      );
    }
    const idempotencyKey = c.req.header("idempotency-key") ?? crypto.randomUUID();
    if (!/^[\w-]{8,100}$/.test(idempotencyKey)) {
      throw new AppError("invalid_request", "Idempotency-Key: 8 to 100 letters, digits, - or _", {
        field: "Idempotency-Key",
      });
    }
    const stripe = stripeClient(cfg);
    const base = returnBase(c);
    const userKey = await keyedHash(c.env.ERASURE_HASH_KEY, "checkout", userId);
    const creating = withStripeCustomer(c, access.orgId, (customer) =>
      stripe.checkout.sessions.create(
        {
          mode: "payment",
          customer,
          client_reference_id: access.orgId,
          // Only the org: nothing at Stripe names a member (erasure could not reach it there).
          metadata: { orgId: access.orgId },
          payment_intent_data: { metadata: { orgId: access.orgId } },
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: "usd",
                unit_amount: amountMicros / 10_000,
                product_data: { name: "Parley credits" },
              },
            },
          ],
          success_url: `${base}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
          cancel_url: `${base}/billing?checkout=cancelled`,
        },
        {
          // Per caller, without naming them at Stripe (which keeps idempotency keys for a day), and
          // per customer: the retry with a replaced customer must not meet the refusal Stripe may
          // have kept for the dead one under the same key (nor be refused as "other parameters").
          idempotencyKey: `checkout-${access.orgId}-${userKey}-${customer}-${idempotencyKey}`,
        },
      ),
    );
    const session = await creating.catch((cause: unknown) => {
      // Stripe refuses a key reused with other parameters (another amount): the client's mistake.
      if (!isIdempotencyConflict(cause)) throw cause;
      throw new AppError(
        "conflict",
        "Idempotency-Key: already used for a different checkout (another amount); use a new key",
        { field: "Idempotency-Key", cause },
      );
    });
    if (!session.url) throw new AppError("internal", "Stripe returned no Checkout URL");
    return c.json({ id: session.id, url: session.url }, 201);
  })

  /** A Stripe customer portal link, for receipts and saved cards (owners and admins). */
  .post("/:orgId/billing/portal", async (c) => {
    const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
    requireRole(access, "admin");
    const base = returnBase(c);
    const stripe = stripeClient(config(c.env));
    const portal = await withStripeCustomer(c, access.orgId, (customer) =>
      stripe.billingPortal.sessions.create({ customer, return_url: `${base}/billing` }),
    );
    return c.json({ url: portal.url }, 201);
  });

/**
 * The previous page's last row, from a `nextCursor` of the form `<time>.<key>` (alerts: fired at
 * and key; activity: created at and request id), or a 400.
 */
function keysetCursor(cursor: string): { at: number; key: string } {
  const match = /^([1-9]\d{0,15})\.(.+)$/s.exec(cursor);
  const at = Number(match?.[1]);
  if (!match?.[2] || !Number.isSafeInteger(at)) {
    throw new AppError("invalid_request", "query.cursor: not a cursor from this list", {
      field: "query.cursor",
    });
  }
  return { at, key: match[2] };
}

interface OrgCustomer {
  name: string;
  stripe_customer_id: string | null;
}

async function orgCustomer(c: Context<AppEnv>, orgId: string): Promise<OrgCustomer> {
  const org = await c.env.DB.prepare(
    "SELECT name, stripe_customer_id FROM organizations WHERE id = ?",
  )
    .bind(orgId)
    .first<OrgCustomer>();
  if (!org) throw notFound("Organization");
  return org;
}

/**
 * Creates a Stripe customer for the org and stores it in place of `replacing` (null: the org had
 * none), conditionally, so requests racing store one; returns the one stored. Requests that race
 * share the idempotency key, so Stripe makes one customer for them.
 */
async function storeNewCustomer(
  c: Context<AppEnv>,
  orgId: string,
  org: OrgCustomer,
  replacing: string | null,
): Promise<string> {
  const customer = await stripeClient(config(c.env)).customers.create(
    { name: org.name, metadata: { orgId } },
    // A new key for a replacement: the first key would replay the customer that no longer exists.
    {
      idempotencyKey:
        replacing === null ? `customer-${orgId}` : `customer-${orgId}-after-${replacing}`,
    },
  );
  const stored = await c.env.DB.prepare(
    `UPDATE organizations SET stripe_customer_id = ?1 WHERE id = ?2 AND stripe_customer_id IS ?3
     RETURNING stripe_customer_id`,
  )
    .bind(customer.id, orgId, replacing)
    .first<{ stripe_customer_id: string }>();
  if (stored) return stored.stripe_customer_id;
  // Another request stored one first (the same customer, or a replacement of its own).
  return (await orgCustomer(c, orgId)).stripe_customer_id ?? customer.id;
}

/** The org's Stripe customer, created on first use (idempotently, so a race makes one customer). */
async function stripeCustomer(c: Context<AppEnv>, orgId: string): Promise<string> {
  const org = await orgCustomer(c, orgId);
  return org.stripe_customer_id ?? storeNewCustomer(c, orgId, org, null);
}

/** Whether Stripe refused a request because the customer it names does not exist (any more). */
const isMissingCustomer = (error: unknown): boolean =>
  error instanceof Stripe.errors.StripeInvalidRequestError &&
  error.code === "resource_missing" &&
  error.param === "customer";

/**
 * Runs `use` with the org's Stripe customer. The stored customer can vanish at Stripe: deleted in
 * the dashboard (or, locally, lost when the Stripe stand-in restarts), and every checkout and
 * portal link then failed with 500 ("No such customer"). When Stripe says so, the org gets a new
 * customer, stored in place of the dead id only if that is still the one stored, and `use` runs
 * once more with it. Payments already made are not at stake: credits come from the webhook, which
 * reads the org from the session's metadata, not from the customer.
 */
async function withStripeCustomer<T>(
  c: Context<AppEnv>,
  orgId: string,
  use: (customer: string) => Promise<T>,
): Promise<T> {
  const customer = await stripeCustomer(c, orgId);
  try {
    return await use(customer);
  } catch (error) {
    if (!isMissingCustomer(error)) throw error;
    const org = await orgCustomer(c, orgId);
    // Already replaced by a request that met the same refusal: use that one.
    const next =
      org.stripe_customer_id !== null && org.stripe_customer_id !== customer
        ? org.stripe_customer_id
        : await storeNewCustomer(c, orgId, org, customer);
    console.log(
      JSON.stringify({
        level: "info",
        source: "stripe-customer",
        orgId,
        replaced: customer,
        by: next,
      }),
    );
    return use(next);
  }
}

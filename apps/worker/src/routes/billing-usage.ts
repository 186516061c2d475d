import type { UsageRow } from "@parley/billing";
import {
  type ActivityItem,
  type ActivityPage,
  AppError,
  activityQuerySchema,
  activityResponseSchema,
  type UsageGroup,
  type UsageGroupBy,
  type UsageReport,
  usageQuerySchema,
  usageReportSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { atLeast } from "../auth/access.ts";
import { acceptApiKey, type OrgCaller, orgCaller } from "../auth/api-keys.ts";
import { billingAccount } from "../billing/account.ts";
import { usageGroups } from "../billing/billing-account.ts";
import { type Labels, resolveLabels } from "../billing/labels.ts";
import { toolOfUsageKey, usageModelLabels } from "../billing/usage-model-labels.ts";
import { iso, keysetCursor } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { query } from "../http/validate.ts";

const CSV_PAGE = 1000;

/**
 * Members see only their own usage; owners, admins and the org's API keys (`usage:read`) see the
 * org's, optionally one member's.
 */
function usageMember(who: OrgCaller, requested: string | undefined): string | undefined {
  if (who.kind === "apiKey" || atLeast(who.access.role, "admin")) return requested;
  if (requested !== undefined && requested !== who.userId) {
    throw new AppError("forbidden", "Members can only see their own usage");
  }
  return who.userId;
}

/** Usage and its CSV also take the org's API keys with `usage:read` (auth/api-keys.ts). */
const usageReader = acceptApiKey("usage:read");

/** The label of a usage group's key, by what the usage is grouped by. */
function groupLabel(
  labels: Labels,
  model: (id: string) => string,
  groupBy: UsageGroupBy,
  key: string | null,
): string {
  switch (groupBy) {
    case "member":
      return labels.member(key);
    case "project":
      return labels.project(key);
    case "session":
      return labels.session(key);
    // The catalogue's display name; the key stays the model id (2026-12-06).
    case "model":
      return key === null ? "" : model(key);
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

/** An org's usage: the grouped report, its CSV export and the activity list (under billing.ts). */
export const billingUsage = new Hono<AppEnv>()
  .get(
    "/:orgId/billing/usage",
    describeRoute({
      tags: ["Billing"],
      summary: "Usage and cost, grouped",
      security: security.memberOrApiKey("usage:read"),
      responses: { 200: json(usageReportSchema), ...errors(401, 403, 404) },
    }),
    usageReader,
    query(usageQuerySchema),
    async (c) => {
      const who = await orgCaller(c, c.req.param("orgId"));
      const access = { orgId: who.orgId };
      const q = c.req.valid("query");
      const memberId = usageMember(who, q.memberId);
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
      const [labels, model] = await Promise.all([
        resolveLabels(c.env.DB, access.orgId, {
          ...(q.groupBy === "member" ? { members: keys } : {}),
          ...(q.groupBy === "project" ? { projects: keys } : {}),
          ...(q.groupBy === "session" ? { sessions: keys } : {}),
        }),
        usageModelLabels(c.env, access.orgId),
      ]);
      const items = groups.map(
        (group): UsageGroup => ({
          ...group,
          label: groupLabel(labels, model, q.groupBy, group.key),
        }),
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
    },
  )

  /** Every usage event of the window as CSV, streamed page by page from the Durable Object. */
  .get(
    "/:orgId/billing/usage.csv",
    describeRoute({
      tags: ["Billing"],
      summary: "Every usage event of the window as CSV",
      security: security.memberOrApiKey("usage:read"),
      responses: {
        200: {
          description: "CSV, streamed",
          content: { "text/csv": { schema: { type: "string" } } },
        },
        ...errors(401, 403, 404),
      },
    }),
    usageReader,
    query(usageQuerySchema),
    async (c) => {
      const who = await orgCaller(c, c.req.param("orgId"));
      const access = { orgId: who.orgId };
      const q = c.req.valid("query");
      const memberId = usageMember(who, q.memberId);
      const account = billingAccount(c.env, access.orgId);
      const model = await usageModelLabels(c.env, access.orgId);
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
        // Since 2026-12-02: the grants that paid for the call, `<grant id>:<source>:<micros>;...`.
        "grants",
        // Since 2026-12-06: the model's display name in the catalogue (its id when unlisted).
        "model_label",
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
                row.grants,
                model(row.model),
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
    },
  )

  /**
   * Every provider call (usage event), newest first, with names for its member, project and
   * session. Owners and admins see the org's, filtered as they like; a member sees only their own
   * (naming another member is refused, as for usage).
   */
  .get(
    "/:orgId/billing/activity",
    describeRoute({
      tags: ["Billing"],
      summary: "Every provider call, newest first",
      responses: { 200: json(activityResponseSchema), ...errors(401, 403, 404) },
    }),
    query(activityQuerySchema),
    async (c) => {
      // Members only (no API key reaches it); `orgCaller` for the rule of `usageMember`.
      const who = await orgCaller(c, c.req.param("orgId"));
      const access = { orgId: who.orgId };
      const q = c.req.valid("query");
      const memberId = usageMember(who, q.member);
      const before = q.cursor === undefined ? undefined : keysetCursor(q.cursor);
      const rows = await billingAccount(c.env, access.orgId).activityRows({
        from: q.from ?? 0,
        to: q.to ?? Date.now() + 1,
        limit: q.limit + 1,
        ...(memberId === undefined ? {} : { memberId }),
        ...(q.project === undefined ? {} : { projectId: q.project }),
        ...(q.session === undefined ? {} : { sessionId: q.session }),
        ...(q.model === undefined ? {} : { model: q.model }),
        ...(before === undefined
          ? {}
          : { before: { createdAt: before.at, requestId: before.key } }),
      });
      const page = rows.slice(0, q.limit);
      const [labels, model] = await Promise.all([
        resolveLabels(c.env.DB, access.orgId, idsOf(page)),
        usageModelLabels(c.env, access.orgId),
      ]);
      const last = page.at(-1);
      return c.json({
        items: page.map(
          (row): ActivityItem => ({
            id: row.requestId,
            createdAt: iso(row.createdAt),
            member:
              row.memberId === null
                ? null
                : { id: row.memberId, label: labels.member(row.memberId) },
            project:
              row.projectId === null
                ? null
                : { id: row.projectId, label: labels.project(row.projectId) },
            session:
              row.sessionId === null
                ? null
                : { id: row.sessionId, label: labels.session(row.sessionId) },
            model: row.model,
            modelLabel: model(row.model),
            kind: toolOfUsageKey(row.model) ? "tool" : "model",
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
    },
  );

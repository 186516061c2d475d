import {
  type LimitRule as AccountLimitRule,
  type EndUserLimits,
  type LimitSubject,
  type PrincipalLimit,
  scopePeriod,
} from "@parley/billing";
import {
  type LimitRule,
  type LimitRuleInput,
  type LimitStatus,
  limitRuleListSchema,
  limitRuleSchema,
  limitStatusSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound, orgAccess, requireRole, sessionAccess } from "../auth/access.ts";
import { billingAccount, openBillingAccount } from "../billing/account.ts";
import { resolveLabels } from "../billing/labels.ts";
import { auditStatement } from "../db/audit.ts";
import { iso } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";

/**
 * Limits on one member, one project or oneself, per day, week or month (issue 16.4;
 * docs/2026-12-02-billing-features.md), and what applies to a caller's chat for its warning.
 */

type Status = PrincipalLimit & { resetsAt: number };

/** The limits on a principal's calls, as the chat's warning reads them. */
export async function limitStatus(
  env: Env,
  orgId: string,
  who: { memberId: string; projectId: string | null; endUserLimits?: EndUserLimits },
): Promise<LimitStatus> {
  await openBillingAccount(env, orgId);
  const account = billingAccount(env, orgId);
  const [limits, settings] = await Promise.all([account.limitStatus(who), account.settings()]);
  const warningPct = settings.limitWarningPct;
  return {
    warningPct,
    limits: limits.map((limit: Status) => ({
      limit: limit.scope,
      period: scopePeriod(limit.scope),
      limitMicros: limit.limitMicros,
      spentMicros: limit.spentMicros,
      resetsAt: iso(limit.resetsAt),
      raisedBy: limit.scope.startsWith("own_") ? "you" : "admins",
      warning:
        warningPct !== null &&
        BigInt(limit.spentMicros) * 100n >= BigInt(limit.limitMicros) * BigInt(warningPct),
    })),
  };
}

/** One subject's limits as the API lists them. */
async function listed(
  db: D1Database,
  orgId: string,
  rules: AccountLimitRule[],
): Promise<LimitRule[]> {
  const labels = await resolveLabels(db, orgId, {
    members: rules.filter((rule) => rule.subject !== "project").map((rule) => rule.subjectId),
    projects: rules.filter((rule) => rule.subject === "project").map((rule) => rule.subjectId),
  });
  return rules.map((rule) => ({
    ...rule,
    label:
      rule.subject === "project" ? labels.project(rule.subjectId) : labels.member(rule.subjectId),
    updatedAt: iso(rule.updatedAt),
  }));
}

/** Sets or removes one limit and writes the audit line; answers the subject's limits. */
async function putRule(
  c: { env: Env },
  orgId: string,
  actorId: string,
  rule: { subject: LimitSubject; subjectId: string } & LimitRuleInput,
): Promise<{ items: LimitRule[] }> {
  await openBillingAccount(c.env, orgId);
  const rules = await billingAccount(c.env, orgId).setLimitRule(rule);
  await auditStatement(c.env.DB, {
    orgId,
    actorId,
    action: "billing.limit_changed",
    subjectType: rule.subject === "project" ? "project" : "user",
    subjectId: rule.subjectId,
    data: { subject: rule.subject, period: rule.period, removed: rule.amountMicros === null },
  }).run();
  return { items: await listed(c.env.DB, orgId, rules) };
}

/**
 * An admin sets or removes a limit on a member or project of their org: the subject must be the
 * org's (`exists.query`, bound to the subject's id and the org's), or it is 404 like a missing one.
 */
async function adminSetsRule(
  c: Context<AppEnv, string, { out: { json: LimitRuleInput } }>,
  subject: "member" | "project",
  subjectId: string,
  exists: { query: string; what: string },
): Promise<Response> {
  const actorId = c.get("caller").userId;
  const access = await orgAccess(c.env.DB, actorId, c.req.param("orgId") ?? "");
  requireRole(access, "admin");
  const found = await c.env.DB.prepare(exists.query).bind(subjectId, access.orgId).first();
  if (!found) throw notFound(exists.what);
  const rule = { subject, subjectId, ...c.req.valid("json") };
  return c.json(await putRule(c, access.orgId, actorId, rule));
}

const ruleResponses = { 200: json(limitRuleListSchema), ...errors(400, 401, 403, 404) };

export const billingLimits = new Hono<AppEnv>()
  /** Every limit set on a member, oneself or a project (owners and admins). */
  .get(
    "/:orgId/billing/limits",
    describeRoute({
      tags: ["Billing"],
      summary: "Limits on members and projects",
      responses: { 200: json(limitRuleListSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      await openBillingAccount(c.env, access.orgId);
      const rules = await billingAccount(c.env, access.orgId).limitRules();
      return c.json({ items: await listed(c.env.DB, access.orgId, rules) });
    },
  )

  /** The limits on the caller's own calls in the org (no project's), with their own. */
  .get(
    "/:orgId/billing/limits/me",
    describeRoute({
      tags: ["Billing"],
      summary: "The limits on your calls, spent so far",
      responses: { 200: json(limitStatusSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      return c.json(await limitStatus(c.env, access.orgId, { memberId: userId, projectId: null }));
    },
  )

  /** A member sets a limit on themselves: on top of an admin's, so it can only lower it. */
  .put(
    "/:orgId/billing/limits/me",
    describeRoute({
      tags: ["Billing"],
      summary: "Set or remove a limit on yourself",
      responses: { 200: json(limitRuleListSchema), ...errors(400, 401, 404) },
    }),
    jsonBody(limitRuleSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      const body = c.req.valid("json");
      return c.json(
        await putRule(c, access.orgId, userId, { subject: "own", subjectId: userId, ...body }),
      );
    },
  )

  /** An admin's limit on one member, in place of the org's member daily limit for them. */
  .put(
    "/:orgId/billing/limits/members/:userId",
    describeRoute({
      tags: ["Billing"],
      summary: "Set or remove a limit on one member",
      responses: ruleResponses,
    }),
    jsonBody(limitRuleSchema),
    (c) =>
      adminSetsRule(c, "member", c.req.param("userId"), {
        query: "SELECT 1 AS ok FROM memberships WHERE user_id = ?1 AND org_id = ?2",
        what: "Member",
      }),
  )

  /** An admin's limit on one project: every member's and end user's calls in it count. */
  .put(
    "/:orgId/billing/limits/projects/:projectId",
    describeRoute({
      tags: ["Billing"],
      summary: "Set or remove a limit on one project",
      responses: ruleResponses,
    }),
    jsonBody(limitRuleSchema),
    (c) =>
      adminSetsRule(c, "project", c.req.param("projectId"), {
        query: "SELECT 1 AS ok FROM projects WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
        what: "Project",
      }),
  );

/** The limits on the caller's calls in one of their sessions (the web chat's warning). */
export const sessionLimits = new Hono<AppEnv>().get(
  "/:sessionId/limits",
  describeRoute({
    tags: ["Sessions"],
    summary: "The limits on your calls in this session's project",
    responses: { 200: json(limitStatusSchema), ...errors(401, 404, 410) },
  }),
  async (c) => {
    const { userId } = c.get("caller");
    const { session } = await sessionAccess(c.env.DB, userId, c.req.param("sessionId"));
    return c.json(
      await limitStatus(c.env, session.org_id, { memberId: userId, projectId: session.project_id }),
    );
  },
);

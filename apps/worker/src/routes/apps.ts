import {
  AppError,
  type AppWithSecret,
  appPageSchema,
  appSchema,
  appWithSecretSchema,
  createAppSchema,
  newId,
  pageQuerySchema,
  type RotatedAppSecret,
  rotateAppSecretSchema,
  rotatedAppSecretSchema,
  updateAppSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { revokeConnections } from "../agents/revocation.ts";
import { assignable, checkAssignable } from "../assistants/assign.ts";
import { appAccess, notFound, orgAccess, requireRole } from "../auth/access.ts";
import { storedVerification } from "../auth/app-verification.ts";
import { billingAccount } from "../billing/account.ts";
import { checkProjects, dropSecrets, listStatements, newSecret, reload } from "../db/app-writes.ts";
import {
  APP_COLUMNS,
  type AppQueryRow,
  type AppRecord,
  lookupApp,
  toApp,
  toAppRecord,
  toSecretInfo,
} from "../db/apps.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";

/**
 * Apps (embeds) of an org: owners and admins register, change and delete them, and rotate their
 * signing secrets (docs/2026-12-02-apps-and-end-users.md). A secret is in the one response that
 * creates it, never in a read, a list or a log.
 */

/** Apps of an org (routes under /api/orgs/:orgId). */
/**
 * After an app changed or was deleted: its end users' open sockets are re-checked now (the agent
 * keeps an end user's access, with the app's limits, between turns; a socket of a deleted app, or
 * in a project the app no longer lists, closes), and when the limits moved the org's leases are
 * returned so the next grants are sized under the new ones.
 */
async function appChanged(env: Env, app: AppRecord, changed: { limits: boolean }): Promise<void> {
  await revokeConnections(env, { familyId: app.id });
  if (changed.limits) await billingAccount(env, app.org_id).limitsChanged();
}

export const orgApps = new Hono<AppEnv>()

  .get(
    "/:orgId/apps",
    describeRoute({
      tags: ["Apps"],
      summary: "The org's apps",
      responses: { 200: json(appPageSchema), ...errors(401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      // APP_COLUMNS reads the time as ?1 (its secrets not yet expired).
      const page = await idPage(
        c.env.DB,
        {
          select: `SELECT ${APP_COLUMNS} FROM apps a`,
          where: "a.org_id = ?2 AND a.deleted_at IS NULL",
          binds: [Date.now(), access.orgId],
          id: "a.id",
        },
        c.req.valid("query"),
        (row: AppQueryRow) => toApp(toAppRecord(row)),
      );
      return c.json(page);
    },
  )

  .post(
    "/:orgId/apps",
    describeRoute({
      tags: ["Apps"],
      summary: "Create an app (a secret shown once)",
      responses: { 201: json(appWithSecretSchema), ...errors(401, 403, 404) },
    }),
    jsonBody(createAppSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const input = c.req.valid("json");
      await checkProjects(db, access.orgId, input.projectIds);
      if (input.profileId) {
        await checkAssignable(c.env, access.orgId, input.profileId, {
          preview: false,
          field: "profileId",
        });
      }
      const verification = await storedVerification(c.env, input.verification);
      const now = Date.now();
      const app = { id: newId("app", now), orgId: access.orgId };
      const secret = verification.token_type === "secret" ? await newSecret(c.env, app, now) : null;
      const [insert] = await db.batch([
        db
          .prepare(
            // Only while the profile named (if any) is still the org's: the rest of the batch
            // writes nothing for an app that was not made.
            `INSERT INTO apps (id, org_id, name, token_type, token_alg, token_jwk, token_jwks_url,
             token_issuer, token_audience, max_token_lifetime_seconds, end_user_daily_limit_micros,
             end_user_monthly_limit_micros, end_user_weekly_limit_micros, show_cost, created_at,
             updated_at, profile_id)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17
           WHERE ${assignable("?17", "?2")}`,
          )
          .bind(
            app.id,
            app.orgId,
            input.name,
            verification.token_type,
            verification.token_alg,
            verification.token_jwk,
            verification.token_jwks_url,
            verification.token_issuer,
            verification.token_audience,
            verification.max_token_lifetime_seconds,
            input.endUserDailyLimitMicros,
            input.endUserMonthlyLimitMicros,
            input.endUserWeeklyLimitMicros,
            input.showCost ? 1 : 0,
            now,
            now,
            input.profileId,
          ),
        auditStatement(
          db,
          {
            orgId: app.orgId,
            actorId: userId,
            action: "app.created",
            subjectType: "app",
            subjectId: app.id,
            data: { verification: verification.token_type },
          },
          { now, afterChange: true },
        ),
        ...listStatements(db, app, input.allowedOrigins, input.projectIds),
        ...(secret ? [secret.statement] : []),
      ]);
      if (insert?.meta.changes !== 1) throw notFound("Profile");
      const body: AppWithSecret = toApp(await reload(db, app.id));
      if (secret) body.secret = secret.shown;
      return c.json(body, 201);
    },
  );

/** One app (routes under /api/apps). */
export const apps = new Hono<AppEnv>()

  .get(
    "/:appId",
    describeRoute({
      tags: ["Apps"],
      summary: "One app",
      responses: { 200: json(appSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { app } = await appAccess(c.env.DB, c.get("caller").userId, c.req.param("appId"));
      return c.json(toApp(app));
    },
  )

  /**
   * Changes any field; lists and `verification` are replaced whole. Leaving `secret` verification
   * drops the app's secrets; coming to it makes one, shown in this response only.
   */
  .patch(
    "/:appId",
    describeRoute({
      tags: ["Apps"],
      summary: "Change an app",
      responses: {
        200: json(appWithSecretSchema, "The app; `secret` when it switched to secret"),
        ...errors(401, 403, 404),
      },
    }),
    jsonBody(updateAppSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { app } = await appAccess(db, userId, c.req.param("appId"));
      const input = c.req.valid("json");
      if (input.projectIds) await checkProjects(db, app.org_id, input.projectIds);
      if (input.profileId) {
        await checkAssignable(c.env, app.org_id, input.profileId, {
          preview: false,
          field: "profileId",
        });
      }
      const verification = input.verification
        ? await storedVerification(c.env, input.verification)
        : null;
      const now = Date.now();
      const ref = { id: app.id, orgId: app.org_id };
      const toSecret = verification?.token_type === "secret" && app.token_type !== "secret";
      const fromSecret =
        verification !== null &&
        verification.token_type !== "secret" &&
        app.token_type === "secret";
      const secret = toSecret ? await newSecret(c.env, ref, now) : null;
      // Only the fields sent are written (the verification's as one): two changes of different
      // fields at once both stay, where writing back what was read would undo the other.
      const sets: [column: string, value: string | number | null][] = [];
      if (input.name !== undefined) sets.push(["name", input.name]);
      if (verification) {
        sets.push(
          ["token_type", verification.token_type],
          ["token_alg", verification.token_alg],
          ["token_jwk", verification.token_jwk],
          ["token_jwks_url", verification.token_jwks_url],
          ["token_issuer", verification.token_issuer],
          ["token_audience", verification.token_audience],
          ["max_token_lifetime_seconds", verification.max_token_lifetime_seconds],
        );
      }
      if (input.endUserDailyLimitMicros !== undefined) {
        sets.push(["end_user_daily_limit_micros", input.endUserDailyLimitMicros]);
      }
      if (input.endUserWeeklyLimitMicros !== undefined) {
        sets.push(["end_user_weekly_limit_micros", input.endUserWeeklyLimitMicros]);
      }
      if (input.endUserMonthlyLimitMicros !== undefined) {
        sets.push(["end_user_monthly_limit_micros", input.endUserMonthlyLimitMicros]);
      }
      if (input.showCost !== undefined) sets.push(["show_cost", input.showCost ? 1 : 0]);
      if (input.profileId !== undefined) sets.push(["profile_id", input.profileId]);
      sets.push(["updated_at", now]);
      const n = sets.length;
      const profileCheck =
        input.profileId === undefined ? "" : `AND ${assignable(`?${n + 2}`, `?${n + 3}`)}`;
      const [update] = await db.batch([
        db
          .prepare(
            `UPDATE apps SET ${sets.map(([column], i) => `${column} = ?${i + 1}`).join(", ")}
             WHERE id = ?${n + 1} AND deleted_at IS NULL ${profileCheck}`,
          )
          .bind(
            ...sets.map(([, value]) => value),
            app.id,
            ...(input.profileId === undefined ? [] : [input.profileId, app.org_id]),
          ),
        auditStatement(
          db,
          {
            orgId: app.org_id,
            actorId: userId,
            action: "app.updated",
            subjectType: "app",
            subjectId: app.id,
            data: Object.fromEntries(Object.keys(input).map((key) => [key, true])),
          },
          { now, afterChange: true },
        ),
        ...listStatements(db, ref, input.allowedOrigins, input.projectIds),
        ...(fromSecret ? dropSecrets(db, app.id) : []),
        ...(secret ? [secret.statement] : []),
      ]);
      if (update?.meta.changes !== 1) {
        // Deleted meanwhile (410), or the profile named was (the check above saw it live).
        if (input.profileId && (await lookupApp(db, app.id))) throw notFound("Profile");
        throw new AppError("gone", "This app was deleted");
      }
      // Its end users' sessions keep the app's limits, projects and profile between turns: they
      // hear now.
      await appChanged(c.env, app, {
        limits:
          input.endUserDailyLimitMicros !== undefined ||
          input.endUserWeeklyLimitMicros !== undefined ||
          input.endUserMonthlyLimitMicros !== undefined,
      });
      const body: AppWithSecret = toApp(await reload(db, app.id));
      if (secret) body.secret = secret.shown;
      return c.json(body);
    },
  )

  /**
   * Deletes the app: from this moment it verifies no token and its end users' access tokens stop
   * working (`requireLiveEndUser`); its secrets are zeroed and removed, its origins forgotten. Its
   * end users stay the org's until the org's erasure (their usage will name them).
   */
  .delete(
    "/:appId",
    describeRoute({
      tags: ["Apps"],
      summary: "Delete an app",
      responses: { 204: empty(), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { app } = await appAccess(db, userId, c.req.param("appId"));
      const now = Date.now();
      const [update] = await db.batch([
        db
          .prepare(
            "UPDATE apps SET deleted_at = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL",
          )
          .bind(now, now, app.id),
        auditStatement(
          db,
          {
            orgId: app.org_id,
            actorId: userId,
            action: "app.deleted",
            subjectType: "app",
            subjectId: app.id,
          },
          { now, afterChange: true },
        ),
        ...dropSecrets(db, app.id),
        db.prepare("DELETE FROM app_origins WHERE app_id = ?").bind(app.id),
      ]);
      if (update?.meta.changes !== 1) throw new AppError("gone", "This app was deleted");
      await appChanged(c.env, app, { limits: true });
      return c.body(null, 204);
    },
  )

  /**
   * A new signing secret, shown once. The one current until now stays valid for `overlapSeconds`
   * (0: refused at once), so the tenant can deploy the new one first; any older one still in its
   * overlap ends now, so at most two are ever live.
   */
  .post(
    "/:appId/secrets",
    describeRoute({
      tags: ["Apps"],
      summary: "Rotate an app's secret",
      responses: { 201: json(rotatedAppSecretSchema), ...errors(401, 403, 404, 409) },
    }),
    jsonBody(rotateAppSecretSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { app } = await appAccess(db, userId, c.req.param("appId"));
      if (app.token_type !== "secret") {
        throw new AppError(
          "conflict",
          "This app verifies tokens with the tenant's own key: it has no secrets to rotate",
        );
      }
      const { overlapSeconds } = c.req.valid("json");
      const now = Date.now();
      const secret = await newSecret(c.env, { id: app.id, orgId: app.org_id }, now);
      await db.batch([
        ...dropSecrets(db, app.id, "expires_at IS NOT NULL"),
        ...(overlapSeconds === 0
          ? dropSecrets(db, app.id, "expires_at IS NULL")
          : [
              db
                .prepare(
                  "UPDATE app_secrets SET expires_at = ? WHERE app_id = ? AND expires_at IS NULL",
                )
                .bind(now + overlapSeconds * 1000, app.id),
            ]),
        secret.statement,
        db.prepare("UPDATE apps SET updated_at = ? WHERE id = ?").bind(now, app.id),
        auditStatement(
          db,
          {
            orgId: app.org_id,
            actorId: userId,
            action: "app.secret_rotated",
            subjectType: "app",
            subjectId: app.id,
            data: { overlapSeconds },
          },
          { now },
        ),
      ]);
      const after = await reload(db, app.id);
      return c.json(
        {
          secret: secret.shown,
          secrets: after.secrets.map(toSecretInfo),
        } satisfies RotatedAppSecret,
        201,
      );
    },
  );

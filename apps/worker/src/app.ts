import { AppError, healthSchema, MAX_DOCUMENT_BYTES, MAX_OPENAPI_BYTES } from "@parley/shared";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { except } from "hono/combine";
import { secureHeaders } from "hono/secure-headers";
import { describeRoute } from "hono-openapi";
import { handleAgentRequest } from "./agents/routing.ts";
import { authenticate } from "./auth/api-keys.ts";
import { jwks } from "./auth/tokens.ts";
import { config } from "./env.ts";
import type { AppEnv } from "./http/context.ts";
import { errorResponse } from "./http/errors.ts";
import { json, security, serveOpenApi } from "./http/openapi.ts";
import { accountRecovery } from "./routes/account-recovery.ts";
import { orgApiKeys } from "./routes/api-keys.ts";
import { appEndUsers } from "./routes/app-end-users.ts";
import { apps, orgApps } from "./routes/apps.ts";
import { auth } from "./routes/auth.ts";
import { billing } from "./routes/billing.ts";
import { sessionLimits } from "./routes/billing-limits.ts";
import { connectTickets } from "./routes/connect-tickets.ts";
import { documents, knowledgeStorage, projectDocuments } from "./routes/documents.ts";
import { embed } from "./routes/embed.ts";
import { endUserDocuments } from "./routes/end-user-documents.ts";
import { endUserSessions } from "./routes/end-user-sessions.ts";
import { endUserToolCalls } from "./routes/end-user-tool-calls.ts";
import { erasure } from "./routes/erasure.ts";
import { exportDownloads, meExports, orgExports } from "./routes/exports.ts";
import { invitationPreview, invitations } from "./routes/invitation-links.ts";
import { orgInvitations } from "./routes/invitations.ts";
import { me } from "./routes/me.ts";
import { meMail } from "./routes/me-mail.ts";
import { catalogueModels, orgModels } from "./routes/models.ts";
import { operator } from "./routes/operator.ts";
import { operatorModels } from "./routes/operator-models.ts";
import { orgs } from "./routes/orgs.ts";
import { profileVersions } from "./routes/profile-versions.ts";
import { orgProfiles, profiles } from "./routes/profiles.ts";
import { orgProjects, projects } from "./routes/projects.ts";
import { orgSessions, sessions } from "./routes/sessions.ts";
import { sessionToolCalls } from "./routes/tool-calls.ts";
import { toolSourceImport } from "./routes/tool-source-import.ts";
import { orgToolSources, toolSources } from "./routes/tool-sources.ts";
import { webhooks } from "./routes/webhooks.ts";

/** Largest JSON body any API route accepts. Project memory (16 KiB) is the largest legitimate one. */
export const MAX_BODY_BYTES = 64 * 1024;
/**
 * Largest webhook body. Stripe's events are not ours to size (an event embeds whole objects, line
 * items and metadata included): refusing a real one with 413 would have Stripe retry it for days.
 */
export const MAX_WEBHOOK_BYTES = 1024 * 1024;
/** A document upload: the largest document, and room for a JSON form's escapes around it. */
export const MAX_UPLOAD_BYTES = MAX_DOCUMENT_BYTES * 2;
/** The routes that take a document (routes/documents.ts): the only bodies past 64 KiB. */
const isUpload = (c: Context) =>
  c.req.method === "POST" &&
  /^\/api\/(projects\/[^/]+\/documents|documents\/[^/]+\/versions)\/?$/.test(c.req.path);

const limitBody = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new AppError("payload_too_large", `Request body must be at most ${maxSize} bytes`);
    },
  });

export const app = new Hono<AppEnv>()
  // A deployment missing a secret fails every request here, the log naming what is missing
  // (env.ts `config`), instead of some routes failing later in ways that look like bad input.
  .use("*", async (c, next) => {
    config(c.env);
    await next();
  })
  .use("/api/*", secureHeaders())
  .use(
    "/api/*",
    except(
      ["/api/webhooks/*", "/api/tool-sources/:id/import-openapi", isUpload],
      limitBody(MAX_BODY_BYTES),
    ),
  )
  .use("/api/*", async (c, next) => (isUpload(c) ? limitBody(MAX_UPLOAD_BYTES)(c, next) : next()))
  .use("/api/webhooks/*", limitBody(MAX_WEBHOOK_BYTES))
  // An OpenAPI document to import as HTTP actions (routes/tool-source-import.ts) outgrows 64 KiB.
  .use("/api/tool-sources/:id/import-openapi", limitBody(MAX_OPENAPI_BYTES))
  // Every API route needs a verified caller, except these few public ones: a member's access
  // token, or an API key on the few routes that declare they take one (auth/api-keys.ts). The
  // embed's token exchange proves itself with a token the app verifies, not a Parley sign-in.
  .use(
    "/api/*",
    except(
      [
        "/api/health",
        "/api/openapi.json",
        "/api/auth/*",
        "/api/webhooks/*",
        "/api/embed/*",
        // A data export's link: its secret is the capability (routes/exports.ts).
        "/api/exports/:exportId/download",
        // The platform operator: its own secret, never a member's token (routes/operator.ts).
        "/api/operator/*",
      ],
      authenticate,
    ),
  )
  .get(
    "/api/health",
    describeRoute({
      tags: ["Health"],
      summary: "Liveness",
      security: security.public,
      responses: { 200: json(healthSchema) },
    }),
    (c) => c.json({ ok: true }),
  )
  // The document of every route here, this one included (http/openapi.ts). No sign-in: it is
  // the public contract, served so a client can be generated from it.
  .get(
    "/api/openapi.json",
    describeRoute({
      tags: ["OpenAPI"],
      summary: "This OpenAPI 3.1 document",
      security: security.public,
      responses: { 200: { description: "The OpenAPI document" } },
    }),
    serveOpenApi((): Hono<AppEnv> => app),
  )
  .get("/.well-known/jwks.json", async (c) => {
    c.header("cache-control", "public, max-age=300");
    return c.json(await jwks(config(c.env)));
  })
  .route("/api/auth/invitations", invitationPreview)
  .route("/api/auth", accountRecovery)
  .route("/api/auth", auth)
  .route("/api/me/exports", meExports)
  .route("/api/me", meMail)
  .route("/api/me", me)
  .route("/api/orgs", orgs)
  .route("/api/orgs", orgProjects)
  .route("/api/orgs", billing)
  .route("/api/orgs", knowledgeStorage)
  .route("/api/orgs", erasure)
  .route("/api/orgs", orgExports)
  .route("/api/exports", exportDownloads)
  .route("/api/orgs", orgSessions)
  .route("/api/orgs", orgInvitations)
  .route("/api/invitations", invitations)
  .route("/api/orgs", orgApps)
  .route("/api/apps", apps)
  .route("/api/apps", appEndUsers)
  .route("/api/embed", embed)
  .route("/api/embed", endUserSessions)
  .route("/api/embed", endUserToolCalls)
  .route("/api/embed", endUserDocuments)
  .route("/api/orgs", orgApiKeys)
  .route("/api/orgs", orgModels)
  .route("/api/orgs", orgProfiles)
  .route("/api/models", catalogueModels)
  .route("/api/profiles", profiles)
  .route("/api/profiles", profileVersions)
  .route("/api/projects", projects)
  .route("/api/projects", projectDocuments)
  .route("/api/documents", documents)
  .route("/api/sessions", sessions)
  .route("/api/sessions", sessionLimits)
  .route("/api/sessions", sessionToolCalls)
  .route("/api/orgs", orgToolSources)
  .route("/api/tool-sources", toolSources)
  .route("/api/tool-sources", toolSourceImport)
  .route("/api/connect-tickets", connectTickets)
  .route("/api/webhooks", webhooks)
  .route("/api/operator/models", operatorModels)
  .route("/api/operator", operator)
  // Chat agents: authorized here, before any Durable Object is addressed (agents/routing.ts).
  .all("/agents/*", handleAgentRequest)
  .notFound((c) => {
    if (c.req.path.startsWith("/api/") || c.req.path.startsWith("/.well-known/")) {
      return errorResponse(new AppError("not_found", "No such route"), c);
    }
    return c.env.ASSETS.fetch(c.req.raw);
  })
  .onError(errorResponse);

export type App = typeof app;

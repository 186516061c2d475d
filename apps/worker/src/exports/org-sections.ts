import { billingAccount } from "../billing/account.ts";
import { publicCard } from "../billing/saved-card.ts";
import type { AppRow } from "../db/apps.ts";
import { iso } from "../db/pagination.ts";
import { toErasureRequest } from "../erasure/file.ts";
import type { ErasureRequestRow } from "../erasure/plan.ts";
import { orgAssistantSettings, profileItems } from "./assistant-sections.ts";
import {
  API_KEY_COLUMNS,
  apiKeyItems,
  auditItems,
  EXPORT_COLUMNS,
  exportItems,
  INVITATION_COLUMNS,
  invitationItems,
  time,
} from "./items.ts";
import { orgMail } from "./mail-section.ts";
import { all, ledgerOf, live, usageOf } from "./read.ts";
import type { ExportRow } from "./sections.ts";

/** Reads one section of an org's archive (owners; docs/2026-12-02-data-export.md). */
export async function readOrgSection(env: Env, row: ExportRow, section: string): Promise<unknown> {
  const db = env.DB;
  const org = row.org_id ?? "";
  switch (section) {
    case "organization": {
      const o = await db
        .prepare("SELECT id, name, stripe_customer_id, created_at FROM organizations WHERE id = ?")
        .bind(org)
        .first<{
          id: string;
          name: string;
          stripe_customer_id: string | null;
          created_at: number;
        }>();
      const account = billingAccount(env, org);
      const [balance, assistants] = await Promise.all([
        account.balance(),
        orgAssistantSettings(db, org),
      ]);
      return (
        o && {
          id: o.id,
          name: o.name,
          createdAt: iso(o.created_at),
          stripeCustomerId: o.stripe_customer_id,
          billing: balance,
          ...assistants,
        }
      );
    }
    case "mail":
      return orgMail(db, org);
    case "members": {
      const rows = await all<{
        user_id: string;
        email: string;
        name: string;
        role: string;
        created_at: number;
      }>(
        db,
        `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM memberships m
         JOIN users u ON u.id = m.user_id WHERE m.org_id = ? ORDER BY m.user_id`,
        org,
      );
      return rows.map((r) => ({
        userId: r.user_id,
        email: r.email,
        name: r.name,
        role: r.role,
        joinedAt: iso(r.created_at),
      }));
    }
    case "invitations":
      return invitationItems(
        await all(
          db,
          `SELECT ${INVITATION_COLUMNS} FROM invitations WHERE org_id = ? ORDER BY id`,
          org,
        ),
      );
    case "projects": {
      const rows = await all<{
        id: string;
        name: string;
        memory: string;
        created_by: string | null;
        created_at: number;
        updated_at: number;
        default_profile_id: string | null;
        preview_profile_id: string | null;
      }>(
        db,
        `SELECT p.id, p.name, p.memory, p.created_by, p.created_at, p.updated_at,
           p.default_profile_id, p.preview_profile_id FROM projects p
         WHERE p.org_id = ? AND ${live("p")} ORDER BY p.id`,
        org,
      );
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        memory: JSON.parse(r.memory) as unknown,
        createdBy: r.created_by,
        createdAt: iso(r.created_at),
        updatedAt: iso(r.updated_at),
        defaultProfileId: r.default_profile_id,
        previewProfileId: r.preview_profile_id,
      }));
    }
    case "profiles":
      return profileItems(db, org);
    case "apps": {
      const apps = await all<Omit<AppRow, "org_id">>(
        db,
        `SELECT id, name, token_type, token_alg, token_jwk, token_jwks_url, token_issuer, token_audience,
           max_token_lifetime_seconds, end_user_daily_limit_micros, end_user_weekly_limit_micros, end_user_monthly_limit_micros,
           show_cost, profile_id, created_at, updated_at, deleted_at
         FROM apps WHERE org_id = ? ORDER BY id`,
        org,
      );
      const origins = await all<{ app_id: string; origin: string }>(
        db,
        "SELECT app_id, origin FROM app_origins WHERE org_id = ?",
        org,
      );
      const projects = await all<{ app_id: string; project_id: string }>(
        db,
        "SELECT app_id, project_id FROM app_projects WHERE org_id = ?",
        org,
      );
      // Which signing secrets exist, never a secret (the sealed value is not selected).
      const secrets = await all<{
        app_id: string;
        kid: string;
        created_at: number;
        expires_at: number | null;
      }>(db, "SELECT app_id, kid, created_at, expires_at FROM app_secrets WHERE org_id = ?", org);
      return apps.map((a) => ({
        id: a.id,
        name: a.name,
        verification: {
          type: a.token_type,
          alg: a.token_alg,
          // A public key (the app stores no private member).
          jwk: a.token_jwk ? (JSON.parse(a.token_jwk) as unknown) : null,
          url: a.token_jwks_url,
          issuer: a.token_issuer,
          audience: a.token_audience,
          maxTokenLifetimeSeconds: a.max_token_lifetime_seconds,
          secrets: secrets
            .filter((s) => s.app_id === a.id)
            .map((s) => ({
              kid: s.kid,
              createdAt: iso(s.created_at),
              expiresAt: time(s.expires_at),
            })),
        },
        allowedOrigins: origins.filter((o) => o.app_id === a.id).map((o) => o.origin),
        projectIds: projects.filter((p) => p.app_id === a.id).map((p) => p.project_id),
        endUserDailyLimitMicros: a.end_user_daily_limit_micros,
        endUserWeeklyLimitMicros: a.end_user_weekly_limit_micros,
        endUserMonthlyLimitMicros: a.end_user_monthly_limit_micros,
        showCost: a.show_cost === 1,
        profileId: a.profile_id,
        createdAt: iso(a.created_at),
        updatedAt: iso(a.updated_at),
        deletedAt: time(a.deleted_at),
      }));
    }
    case "endUsers": {
      const rows = await all<{
        id: string;
        app_id: string;
        external_id: string;
        name: string | null;
        created_at: number;
        last_seen_at: number;
      }>(
        db,
        "SELECT id, app_id, external_id, name, created_at, last_seen_at FROM end_users WHERE org_id = ? ORDER BY id",
        org,
      );
      return rows.map((r) => ({
        id: r.id,
        appId: r.app_id,
        externalId: r.external_id,
        name: r.name,
        createdAt: iso(r.created_at),
        lastSeenAt: iso(r.last_seen_at),
      }));
    }
    case "apiKeys":
      return apiKeyItems(
        await all(db, `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE org_id = ? ORDER BY id`, org),
      );
    case "usage":
      return usageOf(env, org);
    case "ledger":
      return ledgerOf(env, org);
    case "payments": {
      const rows = await all<{
        payment_intent_id: string;
        checkout_session_id: string | null;
        source: string;
        amount_micros: number;
        created_at: number;
      }>(
        db,
        "SELECT payment_intent_id, checkout_session_id, source, amount_micros, created_at FROM stripe_payments WHERE org_id = ? ORDER BY created_at",
        org,
      );
      return rows.map((r) => ({
        paymentIntentId: r.payment_intent_id,
        checkoutSessionId: r.checkout_session_id,
        source: r.source,
        amountMicros: r.amount_micros,
        createdAt: iso(r.created_at),
      }));
    }
    case "autoTopUp": {
      // The settings, the saved card as Stripe described it (never its number), the charges.
      const { settings, card, paused, charges } = await billingAccount(env, org).autoTopUp();
      return {
        ...settings,
        card: card && publicCard(card),
        paused: paused && { code: paused.code, at: iso(paused.at) },
        charges: charges.map((charge) => ({
          id: charge.key,
          amountMicros: charge.amountMicros,
          status: charge.status,
          failureCode: charge.failureCode,
          paymentIntentId: charge.paymentIntentId,
          createdAt: iso(charge.createdAt),
        })),
      };
    }
    case "erasureRequests":
      return (
        await all<ErasureRequestRow>(
          db,
          "SELECT * FROM erasure_requests WHERE org_id = ? ORDER BY id",
          org,
        )
      ).map(toErasureRequest);
    case "audit":
      return auditItems(
        await all(
          db,
          `SELECT id, org_id, actor_id, action, subject_type, subject_id, data, created_at
           FROM audit_log WHERE org_id = ? ORDER BY id`,
          org,
        ),
      );
    case "exports":
      return exportItems(
        await all(
          db,
          `SELECT ${EXPORT_COLUMNS} FROM data_exports WHERE kind = 'org' AND org_id = ? AND id != ? ORDER BY id`,
          org,
          row.id,
        ),
      );
  }
  throw new Error(`no reader for section ${section} of an org export`);
}

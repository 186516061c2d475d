import type {
  ActivityPage,
  AutoTopUp,
  AutoTopUpSettingsInput,
  BillingSettingsPatch,
  LedgerEntry,
  LimitRule,
  LimitRuleInput,
  LimitStatus,
  Page,
  Payment,
  UsageGroupBy,
  UsageReport,
} from "@parley/shared";
import {
  type ActivityFilters,
  type ApiClient,
  api,
  type BillingAlert,
  type BillingSettings,
  queryString,
  type UsageRange,
} from "./api.ts";

/**
 * The billing page's routes (usage, activity, ledger, payments, alerts, limits, automatic top-up,
 * Checkout and the portal), beside `api.ts` so the app shell's script does not carry them: only
 * the billing screens (lazy chunks) import this. The same client (token, refresh, errors).
 */
export function createBillingApi(client: ApiClient) {
  const enc = encodeURIComponent;
  return {
    ledger: (orgId: string, cursor?: string) =>
      client.call<Page<LedgerEntry>>(
        "GET",
        `/api/orgs/${enc(orgId)}/billing/ledger${queryString({ cursor })}`,
      ),
    /** Paid top-ups with Stripe's receipt of each (owners and admins). */
    payments: (orgId: string, cursor?: string) =>
      client.call<Page<Payment>>(
        "GET",
        `/api/orgs/${enc(orgId)}/billing/payments${queryString({ cursor })}`,
      ),
    updateBillingSettings: (orgId: string, patch: BillingSettingsPatch) =>
      client.call<BillingSettings>("PATCH", `/api/orgs/${enc(orgId)}/billing/settings`, patch),
    usage: (orgId: string, groupBy: UsageGroupBy, range: UsageRange = {}) =>
      client.call<UsageReport>(
        "GET",
        `/api/orgs/${enc(orgId)}/billing/usage${queryString({ ...range, groupBy })}`,
      ),
    alerts: (orgId: string, cursor?: string) =>
      client.call<Page<BillingAlert>>(
        "GET",
        `/api/orgs/${enc(orgId)}/billing/alerts${queryString({ cursor })}`,
      ),
    /** One row per provider call, newest first; a member gets only their own. */
    activity: (orgId: string, filters: ActivityFilters = {}, cursor?: string) =>
      client.call<ActivityPage>(
        "GET",
        `/api/orgs/${enc(orgId)}/billing/activity${queryString({ ...filters, cursor })}`,
      ),
    /** Limits on members, projects and oneself (owners and admins). */
    limitRules: (orgId: string) =>
      client.call<{ items: LimitRule[] }>("GET", `/api/orgs/${enc(orgId)}/billing/limits`),
    /** Sets or (amountMicros null) removes a limit; `target` is `me`, a member or a project. */
    setLimit: (
      orgId: string,
      target: { kind: "me" } | { kind: "member" | "project"; id: string },
      input: LimitRuleInput,
    ) =>
      client.call<{ items: LimitRule[] }>(
        "PUT",
        `/api/orgs/${enc(orgId)}/billing/limits/${
          target.kind === "me" ? "me" : `${target.kind}s/${enc(target.id)}`
        }`,
        input,
      ),
    /** The limits on the caller's own calls in the org, spent so far. */
    myLimits: (orgId: string) =>
      client.call<LimitStatus>("GET", `/api/orgs/${enc(orgId)}/billing/limits/me`),
    /** A Stripe customer portal link (receipts, saved cards); owners and admins. */
    billingPortal: (orgId: string) =>
      client.call<{ url: string }>("POST", `/api/orgs/${enc(orgId)}/billing/portal`),
    autoTopUp: (orgId: string) =>
      client.call<AutoTopUp>("GET", `/api/orgs/${enc(orgId)}/billing/auto-top-up`),
    setAutoTopUp: (orgId: string, settings: AutoTopUpSettingsInput) =>
      client.call<AutoTopUp>("PUT", `/api/orgs/${enc(orgId)}/billing/auto-top-up`, settings),
    /** A Stripe Checkout page (setup mode) that saves a card; the webhook keeps it. */
    saveCard: (orgId: string) =>
      client.call<{ id: string; url: string }>(
        "POST",
        `/api/orgs/${enc(orgId)}/billing/auto-top-up/card`,
      ),
    removeCard: (orgId: string) =>
      client.call<AutoTopUp>("DELETE", `/api/orgs/${enc(orgId)}/billing/auto-top-up/card`),
    checkout: (orgId: string, amountMicros: number) =>
      client.call<{ id: string; url: string }>("POST", `/api/orgs/${enc(orgId)}/billing/checkout`, {
        amountMicros,
      }),
  };
}

export const billingApi = createBillingApi(api);

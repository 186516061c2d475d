import type { Accepted, Notifications, OrgNotifications, VerifiedEmail } from "@parley/shared";
import { type ApiClient, api } from "./api.ts";

/**
 * The mail routes of issue 32 (docs/2026-12-06-mail.md): password reset, email verification, a
 * new address, and owners' billing mail. Beside `api.ts`, and imported only by the pages and
 * the banner that use them (lazy chunks), so the shell's initial JavaScript does not carry them;
 * the same client (token, refresh, errors).
 */
export function createMailApi(client: ApiClient) {
  const enc = encodeURIComponent;
  return {
    /**
     * These need no sign-in: a reset is asked for by address, and a link's secret (sent in the
     * body, never a path) is its own credential.
     */
    requestPasswordReset: (email: string) =>
      client.publicPost<Accepted>("/api/auth/password-reset", { email }),
    async confirmPasswordReset(token: string, password: string): Promise<void> {
      await client.publicPost<void>("/api/auth/password-reset/confirm", { token, password });
    },
    verifyEmail: (token: string) =>
      client.publicPost<VerifiedEmail>("/api/auth/verify-email", { token }),
    /** A new verification link to the account's address (the older ones stop working). */
    resendVerification: () => client.call<Accepted>("POST", "/api/me/email-verification"),
    /** Mails a link to the new address; the address changes when it is used. */
    changeEmail: (input: { newEmail: string; password: string }) =>
      client.call<Accepted>("POST", "/api/me/email", input),
    notifications: () => client.call<Notifications>("GET", "/api/me/notifications"),
    updateNotifications: (orgId: string, input: { receipts?: boolean; limitAlerts?: boolean }) =>
      client.call<OrgNotifications>("PATCH", `/api/me/notifications/${enc(orgId)}`, input),
  };
}

export type MailApi = ReturnType<typeof createMailApi>;

/** The app's mail client, over the app's one API client. */
export const mailApi: MailApi = createMailApi(api);

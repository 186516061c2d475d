import { z } from "zod";
import {
  emailAddressSchema,
  newPasswordSchema,
  roleSchema,
  typedPasswordSchema,
} from "./schemas.ts";

/**
 * What the mail flows take and answer (issue 32, docs/2026-12-06-mail.md): password reset, email
 * verification, email change and owners' billing mail. Every link's secret travels in a body,
 * never a path or query: `vfy_` (verify an address), `eml_` (a new address), `rst_` (reset).
 */
const linkSecret = (prefixes: string, what: string) =>
  z
    .string()
    .regex(new RegExp(`^(${prefixes})_[A-Za-z0-9_-]{43}$`), `must be the ${what} link's code`);

/** `POST /api/auth/password-reset`: the same answer whether or not an account has the address. */
export const passwordResetRequestSchema = z.strictObject({ email: emailAddressSchema });
export type PasswordResetRequest = z.infer<typeof passwordResetRequestSchema>;

/** `POST /api/auth/password-reset/confirm`: the link's secret and the new password (sign-up rules). */
export const passwordResetConfirmSchema = z.strictObject({
  token: linkSecret("rst", "password reset"),
  password: newPasswordSchema,
});
export type PasswordResetConfirm = z.infer<typeof passwordResetConfirmSchema>;

/** `POST /api/auth/verify-email`: a sign-up's verification link, or an email change's. */
export const verifyEmailSchema = z.strictObject({
  token: linkSecret("vfy|eml", "verification"),
});
export type VerifyEmail = z.infer<typeof verifyEmailSchema>;

/** `POST /api/me/email`: the new address (verified before it replaces the old) and the password. */
export const changeEmailSchema = z.strictObject({
  newEmail: emailAddressSchema,
  password: typedPasswordSchema,
});
export type ChangeEmail = z.infer<typeof changeEmailSchema>;

/** `PATCH /api/me/notifications/:orgId`: an owner's billing mail for that org. */
export const updateNotificationsSchema = z
  .strictObject({ receipts: z.boolean().optional(), limitAlerts: z.boolean().optional() })
  .refine((value) => value.receipts !== undefined || value.limitAlerts !== undefined, {
    message: "give receipts or limitAlerts",
  });
export type UpdateNotifications = z.infer<typeof updateNotificationsSchema>;

/** A request taken: whatever it leads to happens by mail (the same answer for every address). */
export const acceptedSchema = z
  .strictObject({ accepted: z.literal(true) })
  .meta({ id: "Accepted" });
export type Accepted = z.infer<typeof acceptedSchema>;

/** A verification link used: the account's address now, and whether the link changed it. */
export const verifiedEmailSchema = z
  .strictObject({
    email: z.string(),
    changed: z.boolean().describe("true for an email change's link, false for a sign-up's"),
    signupGrant: z
      .boolean()
      .describe("Whether this verification gave the org signed up with its sign-up grant"),
  })
  .meta({ id: "VerifiedEmail" });
export type VerifiedEmail = z.infer<typeof verifiedEmailSchema>;

/** One org's billing mail for the caller: only owners get it, so only they may switch it on. */
export const orgNotificationsSchema = z
  .strictObject({
    orgId: z.string(),
    orgName: z.string(),
    role: roleSchema,
    receipts: z.boolean().describe("Receipts of credited top-ups, by mail"),
    limitAlerts: z.boolean().describe("Billing limit and balance alerts, by mail"),
    available: z.boolean().describe("Whether the caller may switch them on (owners only)"),
  })
  .meta({ id: "OrgNotifications" });
export type OrgNotifications = z.infer<typeof orgNotificationsSchema>;

export const notificationsSchema = z
  .strictObject({ items: z.array(orgNotificationsSchema) })
  .meta({ id: "Notifications" });
export type Notifications = z.infer<typeof notificationsSchema>;

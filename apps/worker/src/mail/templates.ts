import { formatUsd } from "@parley/billing";
import type { MailContent } from "./mime.ts";

/**
 * Parley's mails, one kind each, and what each is made from. The data is sealed in the outbox row
 * until the mail is sent (mail/outbox.ts); `expiresAt` (ms) marks a link that is useless later, so
 * a mail still unsent then is dropped rather than delivered dead.
 */
export interface MailData {
  invitation: {
    orgName: string;
    inviterName: string;
    role: string;
    link: string;
    expiresAt: number;
  };
  /** `grantWaits`: using the link gives the sign-up grant (absent in mails queued before it). */
  verify_email: { name: string; link: string; expiresAt: number; grantWaits?: boolean };
  password_reset: { name: string; link: string; expiresAt: number };
  password_changed: { name: string; resetLink: string };
  email_change: { name: string; link: string; expiresAt: number };
  email_change_notice: { name: string; newEmail: string; resetLink: string };
  email_taken: { resetLink: string };
  /** `link`: the billing page, or null where PUBLIC_URL is not set. */
  receipt: { orgName: string; amountMicros: number; automatic: boolean; link: string | null };
  limit_alert: { orgName: string; message: string; link: string | null };
}
export type MailKind = keyof MailData;

export const MAIL_KINDS = [
  "invitation",
  "verify_email",
  "password_reset",
  "password_changed",
  "email_change",
  "email_change_notice",
  "email_taken",
  "receipt",
  "limit_alert",
] as const satisfies readonly MailKind[];

const escapeHtml = (text: string): string =>
  text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");

/** At most `max` characters of a name someone typed, for a subject line. */
const short = (text: string, max = 40): string =>
  [...text].length > max ? `${[...text].slice(0, max - 1).join("")}…` : text;

const when = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/:\d\d\.\d+Z$/, " UTC");

/** `a•••@example.com`: enough for its owner to recognise, little for anyone else. */
export function maskedEmail(email: string): string {
  const [local = "", domain = ""] = email.split(/@(?=[^@]*$)/);
  return `${[...local][0] ?? ""}•••@${domain}`;
}

interface Parts {
  subject: string;
  greeting?: string;
  /** Paragraphs of plain text; each is escaped for the HTML part. */
  lines: string[];
  action?: { label: string; url: string };
  /** Paragraphs after the button (what to do if the mail was not expected). */
  after?: string[];
}

/** One layout for every mail: text first, then the same words in simple, escaped HTML. */
function compose(parts: Parts): MailContent {
  const paragraphs = [...(parts.greeting ? [parts.greeting] : []), ...parts.lines];
  const text = [
    ...paragraphs,
    ...(parts.action ? [`${parts.action.label}: ${parts.action.url}`] : []),
    ...(parts.after ?? []),
    "— Parley",
  ].join("\n\n");
  const p = (line: string) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`;
  const button = parts.action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(parts.action.url)}" style="background:#2f5bd3;color:#ffffff;padding:10px 18px;border-radius:6px;text-decoration:none;font-weight:600;display:inline-block">${escapeHtml(parts.action.label)}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#5b6470">Or open this address: <a href="${escapeHtml(parts.action.url)}" style="color:#2f5bd3;word-break:break-all">${escapeHtml(parts.action.url)}</a></p>`
    : "";
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(parts.subject)}</title></head>
<body style="margin:0;padding:24px;background:#f6f7f9;font:15px/1.5 -apple-system,BlinkMacSystemFont,'Segoe UI',sans-serif;color:#1b1f24">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border:1px solid #dde1e6;border-radius:8px;padding:24px">
${paragraphs.map(p).join("\n")}
${button}
${(parts.after ?? []).map(p).join("\n")}
<p style="margin:24px 0 0;color:#5b6470">— Parley</p>
</div>
</body>
</html>`;
  return { subject: parts.subject, text, html };
}

const hello = (name: string) => (name ? `Hello ${name},` : "Hello,");
const notYou = "If you did not ask for this, you can ignore this mail: nothing changes.";

/** The subject and bodies of one mail. */
export function renderMail<K extends MailKind>(kind: K, data: MailData[K]): MailContent {
  const d = data as MailData[MailKind];
  switch (kind) {
    case "invitation": {
      const v = d as MailData["invitation"];
      return compose({
        subject: `Join ${short(v.orgName)} on Parley`,
        lines: [
          `${v.inviterName} invited you to join ${v.orgName} on Parley as ${v.role === "admin" ? "an admin" : `a ${v.role}`}.`,
          `The invitation is for this address only and is good until ${when(v.expiresAt)}. Sign in with this address, or create an account with it, to accept.`,
        ],
        action: { label: "Open the invitation", url: v.link },
        after: [
          "If you did not expect it, ignore this mail: nobody joins an organization unasked.",
        ],
      });
    }
    case "verify_email": {
      const v = d as MailData["verify_email"];
      return compose({
        subject: "Confirm your email address for Parley",
        greeting: hello(v.name),
        lines: [
          `Confirm that this address is yours to finish setting up your Parley account.${
            v.grantWaits === false
              ? ""
              : " Your organization's free credits arrive once it is confirmed."
          }`,
          `The link works once, until ${when(v.expiresAt)}.`,
        ],
        action: { label: "Confirm my email address", url: v.link },
        after: ["If you did not create a Parley account, ignore this mail."],
      });
    }
    case "password_reset": {
      const v = d as MailData["password_reset"];
      return compose({
        subject: "Reset your Parley password",
        greeting: hello(v.name),
        lines: [
          "Someone asked to reset the password of the Parley account with this address. Choose a new one with the link below; it signs you out everywhere.",
          `The link works once, until ${when(v.expiresAt)}.`,
        ],
        action: { label: "Choose a new password", url: v.link },
        after: [notYou],
      });
    }
    case "password_changed": {
      const v = d as MailData["password_changed"];
      return compose({
        subject: "Your Parley password was changed",
        greeting: hello(v.name),
        lines: [
          "The password of your Parley account was just changed, and every other sign-in was ended.",
          "If this was not you, reset your password now: it ends every sign-in, whoever made them.",
        ],
        action: { label: "Reset my password", url: v.resetLink },
      });
    }
    case "email_change": {
      const v = d as MailData["email_change"];
      return compose({
        subject: "Confirm your new email address for Parley",
        greeting: hello(v.name),
        lines: [
          "Confirm this address to make it the one you sign in to Parley with. Until you do, nothing changes.",
          `The link works once, until ${when(v.expiresAt)}.`,
        ],
        action: { label: "Confirm my new address", url: v.link },
        after: [notYou],
      });
    }
    case "email_change_notice": {
      const v = d as MailData["email_change_notice"];
      return compose({
        subject: "Your Parley email address is being changed",
        greeting: hello(v.name),
        lines: [
          `Someone signed in to your Parley account asked to change its email address to ${v.newEmail}. It changes only once the link sent there is used.`,
          "If this was not you, reset your password now: that cancels the change and signs everyone out.",
        ],
        action: { label: "Reset my password", url: v.resetLink },
      });
    }
    case "email_taken": {
      const v = d as MailData["email_taken"];
      return compose({
        subject: "This address already has a Parley account",
        lines: [
          "Someone asked to move another Parley account to this address, but this address already has an account of its own, so nothing changed.",
          "If that was you and you no longer know this account's password, reset it.",
        ],
        action: { label: "Reset the password", url: v.resetLink },
        after: ["Otherwise you can ignore this mail."],
      });
    }
    case "receipt": {
      const v = d as MailData["receipt"];
      return compose({
        subject: `Receipt: ${formatUsd(v.amountMicros)} of credits for ${short(v.orgName)}`,
        lines: [
          `${formatUsd(v.amountMicros)} of credits ${v.automatic ? "from an automatic top-up " : ""}were added to ${v.orgName}'s balance.`,
          "Stripe's receipt for the payment is on the billing page.",
        ],
        ...(v.link ? { action: { label: "Open billing", url: v.link } } : {}),
        after: [
          "You get this because you asked for receipts by mail; change it in your account settings.",
        ],
      });
    }
    case "limit_alert": {
      const v = d as MailData["limit_alert"];
      return compose({
        subject: `Billing alert for ${short(v.orgName)}`,
        lines: [`${v.orgName}: ${v.message}`, "Limits and alerts are on the billing page."],
        ...(v.link ? { action: { label: "Open billing", url: v.link } } : {}),
        after: [
          "You get this because you asked for limit alerts by mail; change it in your account settings.",
        ],
      });
    }
  }
  throw new Error(`no template for ${kind}`);
}

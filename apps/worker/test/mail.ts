import { env } from "cloudflare:test";

/**
 * Reading Parley's mail in the workerd tests: the Worker sends it, through the mail outbox, to the
 * development mailbox the global setup started (MAIL_DEV_URL), which parses each message. These
 * helpers read its JSON API (packages/dev-mailbox/README.md).
 */
export interface Mail {
  id: string;
  from: string | null;
  to: string[];
  subject: string;
  date: string | null;
  messageId: string | null;
  kind: string | null;
  headers: { key: string; value: string }[];
  text: string;
  html: string | null;
  links: string[];
  raw: string;
}

/** Every mail to `to` (newest first), of `kind`, after the mail `after`; waits up to `waitMs` for one. */
export async function mailTo(
  to: string,
  options: { kind?: string; after?: string; waitMs?: number } = {},
): Promise<Mail[]> {
  const query = new URLSearchParams({ to });
  if (options.kind) query.set("kind", options.kind);
  if (options.after) query.set("after", options.after);
  if (options.waitMs) query.set("wait", String(options.waitMs));
  const response = await fetch(`${env.MAIL_DEV_URL}/api/messages?${query}`);
  return ((await response.json()) as { items: Mail[] }).items;
}

/** The newest mail of `kind` to `to`, waiting for it (10 s by default); throws when none comes. */
export async function nextMail(
  to: string,
  kind: string,
  options: { after?: string; waitMs?: number } = {},
): Promise<Mail> {
  const [mail] = await mailTo(to, { kind, ...options, waitMs: options.waitMs ?? 10_000 });
  if (!mail) throw new Error(`no ${kind} mail reached ${to}`);
  return mail;
}

/** The id of the newest mail to `to` so far ("0": none), to ask for what comes after it. */
export async function lastMailId(to: string): Promise<string> {
  return (await mailTo(to))[0]?.id ?? "0";
}

/** The secret in a mail's link to `path` (`/reset-password#<secret>`), as the web page reads it. */
export function linkSecret(mail: Mail, path: string): string {
  const link = mail.links.find((url) => new URL(url).pathname === path);
  if (!link) throw new Error(`no ${path} link in the ${mail.kind} mail`);
  return new URL(link).hash.slice(1);
}

/** Waits `ms`, then answers whether any mail of `kind` reached `to` after `after`. */
export async function mailArrived(
  to: string,
  kind: string,
  after: string,
  ms = 1_500,
): Promise<boolean> {
  return (await mailTo(to, { kind, after, waitMs: ms })).length > 0;
}

import { EmailMessage } from "cloudflare:email";
import { type MailTransportConfig, mailConfig } from "./config.ts";
import type { MailAddress } from "./mime.ts";

/** One built message for one recipient. */
export interface OutgoingMail {
  from: MailAddress;
  to: string;
  /** The whole RFC 5322 message (mime.ts). */
  raw: string;
}

/**
 * What became of a send. `permanent`: trying again cannot help (the address bounced, the
 * provider refused the request as malformed), so the outbox gives up at once. `reason` is a short
 * code for the outbox row and the log: never an address or anything of the message.
 */
export type SendOutcome = { ok: true } | { ok: false; permanent: boolean; reason: string };

/** A way out for mail. Every transport sends the same MIME message. */
export interface Mailer {
  readonly name: MailTransportConfig["kind"];
  send(mail: OutgoingMail): Promise<SendOutcome>;
}

/** How long one send may take before it counts as failed (and is retried). */
const SEND_TIMEOUT_MS = 10_000;

/**
 * Cloudflare Email Service through the Worker's `send_email` binding (`EMAIL`), with the raw
 * message as an `EmailMessage` from `cloudflare:email`. The binding throws on refusal; its errors
 * are not classified in its types, so each one is retried and the outbox gives up after its last
 * attempt (the sender domain must be onboarded: docs/2026-12-06-mail.md).
 */
export function cloudflareMailer(binding: SendEmail | undefined): Mailer {
  return {
    name: "cloudflare",
    async send(mail) {
      if (!binding) return { ok: false, permanent: false, reason: "no_email_binding" };
      try {
        await binding.send(new EmailMessage(mail.from.addr, mail.to, mail.raw));
        return { ok: true };
      } catch {
        // The error's text may repeat the address: only that it failed is kept.
        return { ok: false, permanent: false, reason: "binding_refused" };
      }
    },
  };
}

interface SendRawAnswer {
  success?: boolean;
  result?: { delivered?: string[]; permanent_bounces?: string[]; queued?: string[] } | null;
}

/**
 * An HTTP provider that takes raw MIME in the shape of Cloudflare Email Service's REST call
 * (`POST /accounts/{account_id}/email/sending/send_raw`, `{ from, recipients, mime_message }`,
 * bearer token), which the development mailbox speaks too. 2xx with the recipient delivered or
 * queued is sent; a permanent bounce, or a 4xx other than 408 and 429, is permanent; the rest
 * (5xx, timeouts, network) is retried. No redirect is followed: the token goes to that URL only.
 */
export function httpMailer(
  url: string,
  token: string | null,
  name: "http" | "dev" = "http",
): Mailer {
  return {
    name,
    async send(mail) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify({
            from: mail.from.addr,
            recipients: [mail.to],
            mime_message: mail.raw,
          }),
          redirect: "manual",
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
      } catch {
        return { ok: false, permanent: false, reason: "unreachable" };
      }
      if (!response.ok) {
        await response.body?.cancel();
        const retry = response.status >= 500 || response.status === 408 || response.status === 429;
        return { ok: false, permanent: !retry, reason: `http_${response.status}` };
      }
      const answer = (await response.json().catch(() => null)) as SendRawAnswer | null;
      if (answer?.success === false) return { ok: false, permanent: false, reason: "not_success" };
      if (answer?.result?.permanent_bounces?.length) {
        return { ok: false, permanent: true, reason: "bounced" };
      }
      return { ok: true };
    },
  };
}

/** The transport `MAIL_TRANSPORT` names (mail/config.ts). */
export function mailerFor(env: Env): Mailer {
  const transport = mailConfig(env).transport;
  switch (transport.kind) {
    case "cloudflare":
      return cloudflareMailer(env.EMAIL);
    case "http":
      return httpMailer(transport.url, transport.token);
    case "dev":
      return httpMailer(`${transport.url.replace(/\/+$/, "")}/api/send_raw`, null, "dev");
  }
}

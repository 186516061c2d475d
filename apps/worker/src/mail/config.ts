import { z } from "zod";
import type { MailAddress } from "./mime.ts";

declare global {
  interface Env {
    /** The HTTP provider's bearer token (a secret), for `MAIL_TRANSPORT=http`. */
    MAIL_HTTP_TOKEN?: string;
  }
}

export type MailTransportConfig =
  | { kind: "cloudflare" }
  | { kind: "http"; url: string; token: string }
  | { kind: "dev"; url: string };

export interface MailConfig {
  from: MailAddress;
  transport: MailTransportConfig;
}

const loopback = (url: string) => {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host);
};

const schema = z.object({
  MAIL_TRANSPORT: z
    .union([z.literal(""), z.enum(["cloudflare", "http", "dev"])])
    .optional()
    .transform((value) => value || "cloudflare"),
  MAIL_FROM: z.string().optional(),
  MAIL_HTTP_URL: z.union([z.literal(""), z.url({ protocol: /^https$/ })]).optional(),
  MAIL_HTTP_TOKEN: z.string().optional(),
  // The development mailbox holds reset links in the clear, over plain http: never off this host.
  MAIL_DEV_URL: z
    .union([
      z.literal(""),
      z.url().refine(loopback, "MAIL_DEV_URL must be on this machine (127.0.0.1 or localhost)"),
    ])
    .optional(),
  PUBLIC_URL: z.string().optional(),
});

/** `Name <addr@domain>` or a bare address; anything else is a configuration mistake. */
export function parseFrom(text: string): MailAddress {
  const trimmed = text.trim();
  const match = /^(.*?)\s*<([^<>\s]+@[^<>\s]+)>$/.exec(trimmed);
  const name = (match?.[1] ?? "").replace(/^"|"$/g, "").trim();
  const addr = match?.[2] ?? trimmed;
  if (!/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(addr) || /[\r\n]/.test(name)) {
    throw new Error(`MAIL_FROM is not an address: expected "Name <noreply@example.com>"`);
  }
  return { name, addr };
}

const cache = new WeakMap<object, MailConfig>();

/**
 * How mail leaves, read from the Worker's vars once per `env`, and loud when wrong: the outbox
 * then keeps every mail and retries it (logged) until the configuration is fixed, rather than
 * losing any. Which transport is chosen, and why, is in docs/2026-12-06-mail.md.
 */
export function mailConfig(env: Env): MailConfig {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = schema.parse(env);
  const publicHost = parsed.PUBLIC_URL ? new URL(parsed.PUBLIC_URL).hostname : "parley.localhost";
  const from = parseFrom(parsed.MAIL_FROM || `Parley <noreply@${publicHost}>`);
  let transport: MailTransportConfig;
  if (parsed.MAIL_TRANSPORT === "http") {
    if (!parsed.MAIL_HTTP_URL || !parsed.MAIL_HTTP_TOKEN) {
      throw new Error(
        "MAIL_TRANSPORT=http needs MAIL_HTTP_URL (https) and the MAIL_HTTP_TOKEN secret",
      );
    }
    transport = { kind: "http", url: parsed.MAIL_HTTP_URL, token: parsed.MAIL_HTTP_TOKEN };
  } else if (parsed.MAIL_TRANSPORT === "dev") {
    if (!parsed.MAIL_DEV_URL) throw new Error("MAIL_TRANSPORT=dev needs MAIL_DEV_URL");
    transport = { kind: "dev", url: parsed.MAIL_DEV_URL };
  } else {
    transport = { kind: "cloudflare" };
  }
  const value = { from, transport };
  cache.set(env, value);
  return value;
}

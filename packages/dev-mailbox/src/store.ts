/**
 * What the development mailbox holds: every message it was handed, parsed with postal-mime (the
 * parser Cloudflare's email docs use), newest last. In memory only: a restart empties it, as a
 * laptop's mail catcher should.
 */
import PostalMime, { type Address } from "postal-mime";

export interface StoredMessage {
  /** Increasing from "1": `after=<id>` asks for what came since. */
  id: string;
  receivedAt: string;
  /** The envelope the sender gave (who the transport was asked to deliver to). */
  envelope: { from: string; to: string[] };
  from: string | null;
  to: string[];
  subject: string;
  date: string | null;
  messageId: string | null;
  /** `X-Parley-Kind`: which of Parley's mails this is (invitation, password_reset, ...). */
  kind: string | null;
  headers: { key: string; value: string }[];
  text: string;
  html: string | null;
  /** Every http(s) link in the text and HTML parts, in order, without repeats. */
  links: string[];
  raw: string;
}

/** The most messages kept; the oldest go first. */
export const MAX_MESSAGES = 1000;

const formatAddress = (address: Address): string[] =>
  "group" in address && Array.isArray(address.group)
    ? address.group.flatMap(formatAddress)
    : [address.name ? `${address.name} <${address.address}>` : (address.address ?? "")];

/** The http(s) URLs of a text or HTML part, with the HTML's entities for `&` undone. */
export function linksIn(...parts: (string | null | undefined)[]): string[] {
  const found: string[] = [];
  for (const part of parts) {
    if (!part) continue;
    for (const match of part.matchAll(/https?:\/\/[^\s"'<>()]+/g)) {
      const url = match[0].replaceAll("&amp;", "&").replace(/[.,;:!?]+$/, "");
      if (!found.includes(url)) found.push(url);
    }
  }
  return found;
}

export class MailStore {
  #messages: StoredMessage[] = [];
  #next = 1;
  #waiters = new Set<() => void>();

  /** Parses and keeps a message; resolves to what was stored. */
  async add(raw: string, envelope: { from: string; to: string[] }): Promise<StoredMessage> {
    const email = await PostalMime.parse(raw);
    const header = (name: string) =>
      email.headers.find((h) => h.key.toLowerCase() === name)?.value ?? null;
    const message: StoredMessage = {
      id: String(this.#next++),
      receivedAt: new Date().toISOString(),
      envelope,
      from: email.from ? (formatAddress(email.from)[0] ?? null) : null,
      to: (email.to ?? []).flatMap(formatAddress),
      subject: email.subject ?? "",
      date: email.date ?? null,
      messageId: email.messageId ?? null,
      kind: header("x-parley-kind"),
      headers: email.headers.map((h) => ({ key: h.key, value: h.value })),
      text: email.text ?? "",
      html: email.html ?? null,
      links: linksIn(email.text, email.html),
      raw,
    };
    this.#messages.push(message);
    if (this.#messages.length > MAX_MESSAGES) this.#messages.shift();
    for (const wake of this.#waiters) wake();
    return message;
  }

  get(id: string): StoredMessage | undefined {
    return this.#messages.find((m) => m.id === id);
  }

  /**
   * Messages, newest first, to an address (any of the envelope's or the To header's, case aside),
   * of a kind, after an id.
   */
  list(filter: { to?: string; kind?: string; after?: string } = {}): StoredMessage[] {
    const to = filter.to?.trim().toLowerCase();
    const after = filter.after ? Number(filter.after) : 0;
    return this.#messages
      .filter(
        (m) =>
          (!to ||
            m.envelope.to.some((a) => a.toLowerCase() === to) ||
            m.to.some((a) => a.toLowerCase().includes(to))) &&
          (!filter.kind || m.kind === filter.kind) &&
          Number(m.id) > after,
      )
      .reverse();
  }

  /** Waits until `list(filter)` has something or `ms` pass; resolves to the list either way. */
  async wait(
    filter: Parameters<MailStore["list"]>[0],
    ms: number,
    signal?: AbortSignal,
  ): Promise<StoredMessage[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.list(filter);
      const left = deadline - Date.now();
      if (found.length > 0 || left <= 0 || signal?.aborted) return found;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.#waiters.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
  }

  clear(): void {
    this.#messages = [];
  }

  get size(): number {
    return this.#messages.length;
  }
}

import { createMimeMessage } from "mimetext/browser";

/** A mail's words: the subject and the two bodies a client picks from. */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

export interface MailAddress {
  name: string;
  addr: string;
}

export interface MimeEnvelope {
  from: MailAddress;
  to: string;
  /** Stable across retries (from the outbox row), so a mail delivered twice is one to a client. */
  messageId: string;
  /** Which of Parley's mails this is, as `X-Parley-Kind` (the dev mailbox and filters read it). */
  kind: string;
}

/** Base64 of UTF-8 text in lines of 76 characters (RFC 2045 §6.8). */
export function base64Lines(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return (btoa(binary).match(/.{1,76}/g) ?? []).join("\r\n");
}

/**
 * A real RFC 5322 message (multipart/alternative, text then HTML) built by mimetext, the builder
 * Cloudflare's email docs use, through its browser entry (no Node built-ins, runs in workerd).
 * mimetext writes `Date`, `MIME-Version` and the boundaries, and encodes the subject and display
 * names as RFC 2047 words; the bodies are UTF-8 in base64 (mimetext does not encode them), so any
 * name or org name survives any mail server. Addresses go in as objects, never parsed from text:
 * no display name or address can add a header.
 */
export function buildMime(content: MailContent, envelope: MimeEnvelope): string {
  const message = createMimeMessage();
  message.setSender({ name: envelope.from.name, addr: envelope.from.addr });
  message.setTo({ addr: envelope.to });
  message.setSubject(oneLine(content.subject));
  message.setHeader("Message-ID", envelope.messageId);
  // RFC 3834: an automatic mail, so vacation responders and the like do not answer it.
  message.setHeader("Auto-Submitted", "auto-generated");
  message.setHeader("X-Parley-Kind", envelope.kind);
  message.addMessage({
    contentType: "text/plain",
    encoding: "base64",
    data: base64Lines(content.text),
  });
  message.addMessage({
    contentType: "text/html",
    encoding: "base64",
    data: base64Lines(content.html),
  });
  return message.asRaw();
}

/** Header text on one line: a line break in a subject would end the header. */
export const oneLine = (text: string): string => text.replace(/[\r\n\t]+/g, " ").trim();

import { createMimeMessage } from "mimetext";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DevMailbox, startDevMailbox } from "../src/index.ts";

function mime(to: string, options: { subject?: string; messageId?: string } = {}): string {
  const message = createMimeMessage();
  message.setSender({ name: "Parley", addr: "noreply@parley.test" });
  message.setTo({ addr: to });
  message.setSubject(options.subject ?? "Réinitialiser — reset");
  message.setHeader("Message-ID", options.messageId ?? `<${crypto.randomUUID()}@parley.test>`);
  message.setHeader("X-Parley-Kind", "password_reset");
  message.addMessage({
    contentType: "text/plain",
    data: "Open https://app.test/reset-password#rst_abc to choose a new password.",
  });
  message.addMessage({
    contentType: "text/html",
    data: '<p><a href="https://app.test/reset-password#rst_abc&amp;x=1">Reset</a><script>alert(1)</script></p>',
  });
  return message.asRaw();
}

describe("the development mailbox", () => {
  let mailbox: DevMailbox;
  beforeEach(async () => {
    mailbox = await startDevMailbox({ port: 0 });
  });
  afterEach(() => mailbox.close());

  const sendRaw = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${mailbox.url}/api/send_raw`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  it("keeps a MIME message, parsed, and answers as Cloudflare's send_raw does", async () => {
    const res = await sendRaw({
      from: "noreply@parley.test",
      recipients: ["ada@example.test"],
      mime_message: mime("ada@example.test"),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      success: true,
      errors: [],
      messages: [],
      result: { delivered: ["ada@example.test"], permanent_bounces: [], queued: [] },
    });
    const list = (await (
      await fetch(`${mailbox.url}/api/messages?to=ADA@example.test`)
    ).json()) as {
      items: { id: string; subject: string; kind: string; text: string; links: string[] }[];
    };
    expect(list.items).toHaveLength(1);
    const [message] = list.items;
    expect(message).toMatchObject({ subject: "Réinitialiser — reset", kind: "password_reset" });
    expect(message?.text).toContain("https://app.test/reset-password#rst_abc");
    expect(message?.links).toEqual([
      "https://app.test/reset-password#rst_abc",
      "https://app.test/reset-password#rst_abc&x=1",
    ]);
    // The pages: the list, the message, its HTML alone under a CSP without script.
    expect(await (await fetch(mailbox.url)).text()).toContain("Réinitialiser — reset");
    const page = await (await fetch(`${mailbox.url}/messages/${message?.id}`)).text();
    expect(page).toContain('<a href="https://app.test/reset-password#rst_abc">');
    expect(page).not.toContain("<script>");
    const htmlPart = await fetch(`${mailbox.url}/messages/${message?.id}/html`);
    expect(htmlPart.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(htmlPart.headers.get("content-security-policy")).toContain("sandbox");
    expect(await htmlPart.text()).toContain('<base target="_top">');
  });

  it("refuses a malformed request, and a sender without the token when one is set", async () => {
    expect((await sendRaw({ from: "x", recipients: [], mime_message: "" })).status).toBe(400);
    await mailbox.close();
    mailbox = await startDevMailbox({ port: 0, token: "secret-token" });
    const body = {
      from: "noreply@parley.test",
      recipients: ["bob@example.test"],
      mime_message: mime("bob@example.test"),
    };
    expect((await sendRaw(body)).status).toBe(401);
    expect((await sendRaw(body, { authorization: "Bearer secret-token" })).status).toBe(200);
    expect(mailbox.store.size).toBe(1);
  });

  it("fails once, always or bounces for test addresses that ask to", async () => {
    const once = mime("fail-once@example.test", { messageId: "<m1@parley.test>" });
    const body = (to: string, raw: string) => ({
      from: "noreply@parley.test",
      recipients: [to],
      mime_message: raw,
    });
    expect((await sendRaw(body("fail-once@example.test", once))).status).toBe(503);
    expect((await sendRaw(body("fail-once@example.test", once))).status).toBe(200);
    const always = mime("fail-always@example.test");
    expect((await sendRaw(body("fail-always@example.test", always))).status).toBe(503);
    expect((await sendRaw(body("fail-always@example.test", always))).status).toBe(503);
    const bounce = await sendRaw(body("bounce@example.test", mime("bounce@example.test")));
    expect(((await bounce.json()) as { result: unknown }).result).toEqual({
      delivered: [],
      permanent_bounces: ["bounce@example.test"],
      queued: [],
    });
    expect(mailbox.store.list().map((m) => m.envelope.to)).toEqual([["fail-once@example.test"]]);
  });

  it("waits for a message when asked to", async () => {
    const waiting = fetch(`${mailbox.url}/api/messages?to=late@example.test&wait=5000`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sendRaw({
      from: "noreply@parley.test",
      recipients: ["late@example.test"],
      mime_message: mime("late@example.test"),
    });
    const { items } = (await (await waiting).json()) as { items: unknown[] };
    expect(items).toHaveLength(1);
  });
});

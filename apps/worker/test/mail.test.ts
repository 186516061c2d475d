import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { queueMail } from "../src/mail/outbox.ts";
import { api, inOneWindow, signUp, uniqueEmail, world } from "./helpers.ts";
import { linkSecret, mailArrived, mailTo, nextMail } from "./mail.ts";

/**
 * Mail itself (docs/2026-12-06-mail.md): real MIME messages built by mimetext, sent through the
 * outbox (a D1 row with the change it reports, sent by the MailOutbox object's alarm, retried,
 * never lost) to the development mailbox. Each test mails addresses of its own.
 */

interface OutboxRow {
  kind: string;
  recipient: string;
  status: string;
  attempts: number;
  data: string | null;
  last_error: string | null;
  sent_at: number | null;
}

const outboxTo = (recipient: string) =>
  env.DB.prepare(
    "SELECT kind, recipient, status, attempts, data, last_error, sent_at FROM mail_outbox WHERE recipient = ? ORDER BY id",
  )
    .bind(recipient)
    .all<OutboxRow>()
    .then((r) => r.results);

/** Waits until the outbox row to `recipient` is no longer pending (or `ms` pass). */
async function settledRow(recipient: string, ms = 15_000): Promise<OutboxRow | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const [row] = await outboxTo(recipient);
    if ((row && row.status !== "pending") || Date.now() > deadline) return row;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function invite(owner: { token: string }, orgId: string, email: string) {
  return api<{ url: string; mailed: boolean }>("POST", `/api/orgs/${orgId}/invitations`, {
    token: owner.token,
    body: { email, role: "member" },
  });
}

describe("a mail", () => {
  it("is a real MIME message: multipart text and HTML, encoded subject and names, its own Message-ID and Date", async () => {
    const w = await world();
    // A name that needs encoding, and markup that must reach the HTML part only as text.
    await env.DB.prepare("UPDATE organizations SET name = ? WHERE id = ?")
      .bind("Zoë & Søn <b>Ltd</b>", w.orgId)
      .run();
    const to = uniqueEmail("mime");
    const made = await invite(w.owner, w.orgId, to);
    expect(made.status).toBe(201);
    expect(made.body.mailed).toBe(true);
    const mail = await nextMail(to, "invitation");

    const head = mail.raw.split("\r\n\r\n")[0] ?? "";
    expect(head).toMatch(/^Date: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000$/m);
    expect(head).toMatch(/^From: =\?utf-8\?B\?[A-Za-z0-9+/=]+\?= <noreply@parley\.test>$/m);
    expect(head).toContain(`To: <${to}>`);
    expect(head).toMatch(/^Message-ID: <mail_[0-9a-z]{26}@parley\.test>$/m);
    expect(head).toMatch(/^Subject: =\?utf-8\?B\?[A-Za-z0-9+/=]+\?=$/m);
    expect(head).toContain("MIME-Version: 1.0");
    expect(head).toContain("Auto-Submitted: auto-generated");
    expect(head).toMatch(/^Content-Type: multipart\/alternative; boundary=\w+$/m);
    expect(mail.raw).toContain("Content-Type: text/plain; charset=UTF-8");
    expect(mail.raw).toContain("Content-Type: text/html; charset=UTF-8");
    expect(mail.raw).toContain("Content-Transfer-Encoding: base64");
    // Every line of the message fits the RFC 5322 limit.
    expect(Math.max(...mail.raw.split("\r\n").map((line) => line.length))).toBeLessThanOrEqual(998);

    // Decoded by a real parser (the mailbox's postal-mime).
    expect(mail.from).toBe("Parley <noreply@parley.test>");
    expect(mail.subject).toBe("Join Zoë & Søn <b>Ltd</b> on Parley");
    expect(mail.text).toContain("Zoë & Søn <b>Ltd</b>");
    expect(mail.html).toContain("Zoë &amp; Søn &lt;b&gt;Ltd&lt;/b&gt;");
    expect(mail.html).not.toContain("<b>Ltd</b>");
    // The link the inviter was handed, secret in the fragment.
    expect(mail.links).toContain(made.body.url);
    expect(linkSecret(mail, "/invite")).toMatch(/^inv_/);
  });

  it("that fails to send is retried, then sent; its data is sealed while it waits and cleared after", async () => {
    const w = await world();
    const to = uniqueEmail("fail-once");
    const made = await invite(w.owner, w.orgId, to);
    const [waiting] = await outboxTo(to);
    expect(waiting?.data).toMatch(/^v1\./);
    const secret = new URL(made.body.url).hash.slice(1);
    expect(waiting?.data).not.toContain(secret);
    const mail = await nextMail(to, "invitation", { waitMs: 15_000 });
    expect(mail.links).toContain(made.body.url);
    const row = await settledRow(to);
    expect(row).toMatchObject({ status: "sent", attempts: 2, data: null });
    expect(row?.sent_at).toBeGreaterThan(0);
    // Delivered once: the first attempt was refused, not kept.
    expect(await mailTo(to)).toHaveLength(1);
  }, 30_000);

  it("to an address that bounces is given up at once, and kept as a record", async () => {
    const w = await world();
    const to = uniqueEmail("bounce");
    expect((await invite(w.owner, w.orgId, to)).status).toBe(201);
    expect(await settledRow(to)).toMatchObject({
      status: "failed",
      attempts: 1,
      data: null,
      last_error: "bounced",
    });
    expect(await mailTo(to)).toHaveLength(0);
  });

  it("whose link expired before it could go is dropped, not delivered dead", async () => {
    const to = uniqueEmail("expired");
    const ctx = createExecutionContext();
    await queueMail(env, ctx, {
      kind: "password_reset",
      to,
      data: {
        name: "X",
        link: "https://parley.test/reset-password#rst_x",
        expiresAt: Date.now() - 1,
      },
    });
    await waitOnExecutionContext(ctx);
    expect(await settledRow(to)).toMatchObject({ status: "failed", last_error: "expired" });
    expect(await mailArrived(to, "password_reset", "0", 500)).toBe(false);
  });

  it("that keeps failing is retried with backoff and given up after its last attempt", async () => {
    const to = uniqueEmail("fail-always");
    const ctx = createExecutionContext();
    await queueMail(env, ctx, {
      kind: "password_changed",
      to,
      data: { name: "X", resetLink: "https://parley.test/forgot-password" },
    });
    await waitOnExecutionContext(ctx);
    // The first attempt fails; the next is scheduled seconds later, not at once.
    const first = await (async () => {
      for (let i = 0; i < 100; i++) {
        const row = await env.DB.prepare(
          "SELECT attempts, next_attempt_at, status FROM mail_outbox WHERE recipient = ?",
        )
          .bind(to)
          .first<{ attempts: number; next_attempt_at: number; status: string }>();
        if (row && row.attempts > 0) return row;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error("no attempt was made");
    })();
    expect(first.status).toBe("pending");
    expect(first.next_attempt_at).toBeGreaterThan(Date.now());
    // Its last attempt, due now: it fails too, and the mail is given up (with a record of it).
    await env.DB.prepare(
      "UPDATE mail_outbox SET attempts = 11, next_attempt_at = ? WHERE recipient = ?",
    )
      .bind(Date.now(), to)
      .run();
    const again = createExecutionContext();
    await queueMail(env, again, {
      kind: "password_changed",
      to: uniqueEmail("nudge"),
      data: { name: "X", resetLink: "https://parley.test/forgot-password" },
    });
    await waitOnExecutionContext(again);
    expect(await settledRow(to)).toMatchObject({
      status: "failed",
      attempts: 12,
      data: null,
      last_error: "http_503",
    });
  });
});

describe("invitations by mail", () => {
  it("are not mailed for an inviter whose own address is unverified, nor past 20 a minute: the link is still theirs", async () => {
    const unverified = await signUp("invite-unverified", { verified: false });
    const to = uniqueEmail("not-mailed");
    const made = await invite({ token: unverified.accessToken }, unverified.orgId, to);
    expect(made.status).toBe(201);
    expect(made.body.mailed).toBe(false);
    expect(made.body.url).toMatch(/\/invite#inv_/);
    expect(await outboxTo(to)).toEqual([]);

    await inOneWindow(20_000);
    const w = await world();
    const mailed: boolean[] = [];
    for (let i = 0; i < 21; i++) {
      mailed.push((await invite(w.owner, w.orgId, uniqueEmail(`burst-${i}`))).body.mailed);
    }
    expect(mailed.slice(0, 20).every(Boolean)).toBe(true);
    expect(mailed[20]).toBe(false);
  }, 90_000);
});

describe("mail logs", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("name a mail's kind and outcome, never its address, link, token or words", async () => {
    const lines: string[] = [];
    for (const method of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        lines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      });
    }
    const ada = await signUp("logs-ada");
    await api("POST", "/api/auth/password-reset", { body: { email: ada.email } });
    const reset = await nextMail(ada.email, "password_reset");
    const w = await world();
    const invitee = uniqueEmail("logs-invitee");
    const made = await invite(w.owner, w.orgId, invitee);
    const invitation = await nextMail(invitee, "invitation");

    const captured = lines.join("\n");
    expect(captured).toContain('"source":"mail"');
    expect(captured).toContain('"outcome":"sent"');
    for (const secret of [
      ada.email,
      invitee,
      linkSecret(reset, "/reset-password"),
      new URL(made.body.url).hash.slice(1),
      reset.subject,
      invitation.subject,
    ]) {
      expect(captured).not.toContain(secret);
    }
  });
});

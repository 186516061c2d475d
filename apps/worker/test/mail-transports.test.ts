import { env } from "cloudflare:test";
import { newId } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { parseFrom } from "../src/mail/config.ts";
import { buildMime } from "../src/mail/mime.ts";
import { renderMail } from "../src/mail/templates.ts";
import { cloudflareMailer } from "../src/mail/transports.ts";
import { uniqueEmail } from "./helpers.ts";

/**
 * The production transport, Cloudflare Email Service's `send_email` binding (`EMAIL`,
 * wrangler.jsonc), as the workerd tests have it: Miniflare's local binding, which parses the raw
 * message and checks it as the service does (a Message-ID, a From header that is the envelope's
 * sender). The other tests send through the development mailbox; this is the path a deploy with
 * the default `MAIL_TRANSPORT=cloudflare` takes, with the message the outbox builds.
 */

const from = parseFrom("Parley <noreply@parley.test>");

function invitationMime(to: string, sender = from): string {
  return buildMime(
    renderMail("invitation", {
      orgName: "Zoë & Søn",
      inviterName: "Olive",
      role: "member",
      link: `https://parley.test/invite#inv_${"A".repeat(43)}`,
      expiresAt: Date.now() + 86_400_000,
    }),
    { from: sender, to, messageId: `<${newId("mail")}@parley.test>`, kind: "invitation" },
  );
}

describe("the send_email binding", () => {
  it("takes the outbox's message as it is built", async () => {
    const to = uniqueEmail("binding");
    const outcome = await cloudflareMailer(env.EMAIL).send({ from, to, raw: invitationMime(to) });
    expect(outcome).toEqual({ ok: true });
  });

  it("a refusal is retried (never permanent, and names nothing of the message); no binding is retried too", async () => {
    const to = uniqueEmail("binding-refused");
    // The header names another sender than the envelope: the binding refuses the message.
    const raw = invitationMime(to, parseFrom("Someone <someone@elsewhere.test>"));
    const refused = await cloudflareMailer(env.EMAIL).send({ from, to, raw });
    expect(refused).toEqual({ ok: false, permanent: false, reason: "binding_refused" });
    const missing = await cloudflareMailer(undefined).send({ from, to, raw: invitationMime(to) });
    expect(missing).toEqual({ ok: false, permanent: false, reason: "no_email_binding" });
  });
});

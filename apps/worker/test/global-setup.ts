import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { startDevModel } from "@parley/dev-model";
import { startStripeStandin } from "@parley/stripe-standin";
import type { TestProject } from "vitest/node";

/**
 * Outside services for the workerd tests, started once per run in Node: the Stripe stand-in, the
 * dev model and a mailbox that records webhooks (the Worker under test has no port of its own, so
 * tests read deliveries from the mailbox and replay them, signature and all, through SELF). Paths with
 * "/fail" always answer 500; paths with "/flaky" answer 500 to the first delivery of each body.
 */
export interface Delivered {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    stripeUrl: string;
    stripeWebhookSecret: string;
    devModelUrl: string;
    mailboxUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const deliveries: Delivered[] = [];
  const mailbox = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method === "GET") {
        const prefix = new URL(req.url ?? "/", "http://x").searchParams.get("path") ?? "";
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(deliveries.filter((d) => d.path.startsWith(prefix))));
        return;
      }
      const delivery = {
        path: req.url ?? "/",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      // "/flaky" paths refuse the first delivery of each body: a webhook endpoint that recovers.
      const firstTry = !deliveries.some(
        (d) => d.path === delivery.path && d.body === delivery.body,
      );
      deliveries.push(delivery);
      res.statusCode =
        req.url?.includes("/fail") || (req.url?.includes("/flaky") && firstTry) ? 500 : 200;
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => mailbox.listen(0, "127.0.0.1", resolve));
  const mailboxUrl = `http://127.0.0.1:${(mailbox.address() as AddressInfo).port}`;

  const stripe = await startStripeStandin({
    port: 0,
    webhookUrl: `${mailboxUrl}/stripe`,
    webhookSecret: process.env.STRIPE_WEBHOOK_SECRET ?? "whsec_test_parley",
    retry: { attempts: 2, baseDelayMs: 10 },
  });
  const model = await startDevModel({ port: 0 });

  project.provide("stripeUrl", stripe.url);
  project.provide("stripeWebhookSecret", stripe.webhookSecret);
  project.provide("devModelUrl", model.url);
  project.provide("mailboxUrl", mailboxUrl);

  return async () => {
    await Promise.all([
      stripe.close(),
      model.close(),
      new Promise((resolve) => mailbox.close(resolve)),
    ]);
  };
}

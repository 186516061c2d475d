import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { startDevMailbox } from "@parley/dev-mailbox";
import { startDevModel } from "@parley/dev-model";
import { startStripeStandin } from "@parley/stripe-standin";
import type { TestProject } from "vitest/node";
import { startToolServers } from "./tool-servers.ts";

/**
 * Outside services for the workerd tests, started once per run in Node: the Stripe stand-in, the
 * dev model, the development mailbox that receives Parley's mail (test/mail.ts reads it), and a
 * mailbox that records webhooks (the Worker under test has no port of its own, so
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
    jwksUrl: string;
    devMailboxUrl: string;
    /** test/fixtures/knowledge's files, base64 by name: workerd cannot read the disk itself. */
    knowledgeFixtures: Record<string, string>;
    toolLabUrl: string;
    toolHttpUrl: string;
    shopUrl: string;
    /** The official SDK v2 servers (test/tool-servers-v2.ts), a path per mode. */
    toolV2Url: string;
    /** A second lab that `POST /__flaky {up}` on the lab stops and starts. */
    toolFlakyUrl: string;
    /** A loopback port nothing listens on. */
    toolDownUrl: string;
  }
}

/**
 * A tenant's JWKS endpoint for the end-user token tests: `PUT /keys/<name>` stores a key set (the
 * tests make their key pairs inside workerd), `GET /keys/<name>` serves it and counts the fetch
 * (`GET /hits/<name>`), `/redirect?to=<path>` answers 302, `/slow` never answers in time and `/big`
 * is a megabyte of JSON.
 */
async function startJwksServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sets = new Map<string, string>();
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const [, kind, name = ""] = url.pathname.split("/");
      res.setHeader("content-type", "application/json");
      if (kind === "keys" && req.method === "PUT") {
        sets.set(name, Buffer.concat(chunks).toString());
        res.end("{}");
      } else if (kind === "keys") {
        hits.set(name, (hits.get(name) ?? 0) + 1);
        const body = sets.get(name);
        res.statusCode = body === undefined ? 404 : 200;
        res.end(body ?? "{}");
      } else if (kind === "hits") {
        res.end(JSON.stringify({ hits: hits.get(name) ?? 0 }));
      } else if (kind === "redirect") {
        res.statusCode = 302;
        res.setHeader("location", url.searchParams.get("to") ?? "/");
        res.end();
      } else if (kind === "slow") {
        setTimeout(() => res.end('{"keys":[]}'), 10_000).unref();
      } else if (kind === "big") {
        res.end(JSON.stringify({ keys: [], padding: "x".repeat(1024 * 1024) }));
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
  const jwks = await startJwksServer();
  const devMailbox = await startDevMailbox({ port: 0 });
  // The tool servers (issue 30): an MCP server, HTTP actions and the example shop's MCP server.
  const tools = await startToolServers();

  project.provide("stripeUrl", stripe.url);
  project.provide("stripeWebhookSecret", stripe.webhookSecret);
  project.provide("devModelUrl", model.url);
  project.provide("mailboxUrl", mailboxUrl);
  project.provide("jwksUrl", jwks.url);
  project.provide("devMailboxUrl", devMailbox.url);
  const fixtures = new URL("./fixtures/knowledge/", import.meta.url);
  project.provide(
    "knowledgeFixtures",
    Object.fromEntries(
      readdirSync(fixtures).map((name) => [
        name,
        readFileSync(new URL(name, fixtures)).toString("base64"),
      ]),
    ),
  );
  project.provide("toolLabUrl", tools.labUrl);
  project.provide("toolHttpUrl", tools.httpUrl);
  project.provide("shopUrl", tools.shopUrl);
  project.provide("toolV2Url", tools.v2Url);
  project.provide("toolFlakyUrl", tools.flakyUrl);
  project.provide("toolDownUrl", tools.downUrl);

  return async () => {
    await Promise.all([
      stripe.close(),
      model.close(),
      jwks.close(),
      devMailbox.close(),
      tools.close(),
      new Promise((resolve) => mailbox.close(resolve)),
    ]);
  };
}

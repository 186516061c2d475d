/**
 * Shared by the stand-in's tests: a real `stripe` client pointed at a stand-in, a webhook
 * receiver that keeps raw bodies (signatures are over bytes), and a Checkout Session with the
 * parameters Parley sends.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import { type StripeStandin, startStripeStandin } from "../src/index.ts";

export function stripeClient(standin: StripeStandin, key = "sk_test_standin"): Stripe {
  return new Stripe(key, {
    host: "127.0.0.1",
    port: standin.port,
    protocol: "http",
    maxNetworkRetries: 0,
  });
}

export type Received = {
  readonly body: string;
  readonly signature: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed for convenience; verification must use `body`. */
  readonly event: { id: string; type: string; data: { object: Record<string, unknown> } };
};

export type Receiver = {
  readonly url: string;
  readonly received: Received[];
  /** Of the events received so far, with a 2xx answer, the types in order. */
  types(): string[];
  /** Forgets what was received. */
  clear(): void;
  close(): Promise<void>;
};

/** `respond` picks the status of each request (default 200); it sees the requests so far. */
export async function startReceiver(
  respond: (request: Received, earlier: readonly Received[]) => number = () => 200,
): Promise<Receiver> {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const request: Received = {
        body,
        signature: String(req.headers["stripe-signature"] ?? ""),
        headers: req.headers,
        event: JSON.parse(body),
      };
      const status = respond(request, [...received]);
      received.push(request);
      statuses.push(status);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ received: status < 300 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/webhooks/stripe`,
    received,
    types: () => received.flatMap((r, i) => ((statuses[i] ?? 500) < 300 ? [r.event.type] : [])),
    clear: () => {
      received.length = 0;
      statuses.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What the platform's top-up sends: one line item, metadata on the session and the intent. */
export function topUpParams(
  overrides: Partial<Stripe.Checkout.SessionCreateParams> = {},
): Stripe.Checkout.SessionCreateParams {
  return {
    mode: "payment",
    line_items: [
      {
        price_data: {
          currency: "usd",
          unit_amount: 1000,
          product_data: { name: "Parley credits" },
        },
        quantity: 2,
      },
    ],
    success_url: "http://127.0.0.1:8787/billing?session={CHECKOUT_SESSION_ID}",
    cancel_url: "http://127.0.0.1:8787/billing?cancelled=1",
    client_reference_id: "org_123",
    metadata: { org_id: "org_123", amount_micros: "20000000" },
    payment_intent_data: { metadata: { org_id: "org_123" } },
    ...overrides,
  };
}

export async function verify(
  stripe: Stripe,
  received: Pick<Received, "body" | "signature">,
  secret: string,
): Promise<Stripe.Event> {
  return stripe.webhooks.constructEventAsync(
    received.body,
    received.signature,
    secret,
    undefined,
    Stripe.createSubtleCryptoProvider(),
  );
}

/**
 * A stand-in for one test file, reset before each test, with a real client on it: the getters
 * read the current ones (they exist once `beforeAll` has run).
 */
export function standinPerFile(webhookSecret: string): {
  readonly standin: StripeStandin;
  readonly stripe: Stripe;
} {
  let standin: StripeStandin | undefined;
  let stripe: Stripe | undefined;
  beforeAll(async () => {
    standin = await startStripeStandin({ webhookSecret });
    stripe = stripeClient(standin);
  });
  afterAll(async () => {
    await standin?.close();
  });
  beforeEach(async () => {
    await standin?.reset();
  });
  return {
    get standin() {
      if (!standin) throw new Error("the stand-in starts in beforeAll");
      return standin;
    },
    get stripe() {
      if (!stripe) throw new Error("the stand-in starts in beforeAll");
      return stripe;
    },
  };
}

/** The StripeError a call fails with (the test fails if it succeeds). */
export async function rejection(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  const error = await promise.then(
    () => expect.unreachable("the call should have failed"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Stripe.errors.StripeError);
  return error as Stripe.errors.StripeError;
}

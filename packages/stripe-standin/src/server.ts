/**
 * The HTTP side of the Stripe stand-in: Stripe's `/v1` API for the real `stripe` client, the pay
 * and portal pages a browser visits, and a `/__standin/*` control surface for tests that run
 * out of process.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { routeApi } from "./api.ts";
import { type DisputeOptions, disputeControl } from "./disputes.ts";
import { invalidRequest, StripeApiError } from "./errors.ts";
import { canonicalParams, decodeForm, type FormObject } from "./form.ts";
import { type CheckoutSession, type Dispute, newId, type StripeEvent } from "./objects.ts";
import { closedPage, messagePage, payPage, portalPage, receiptPage, successUrl } from "./pages.ts";
import { type PayOptions, type PayResult, type SetupResult, StandinStore } from "./store.ts";
import { DEFAULT_RETRY, type Delivery, type RetryPolicy, WebhookDispatcher } from "./webhooks.ts";

/** The API version of `stripe@23.1.0` (`Stripe.API_VERSION`), stamped on events. */
export const DEFAULT_API_VERSION = "2026-10-28.endive";

const MAX_BODY_BYTES = 1024 * 1024;
const IDEMPOTENCY_KEY_MAX_CHARS = 255;
/** Stripe forgets keys after 24 hours. The client sends a fresh key with every POST, so the
 * map is also capped (oldest first). */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY_LIMIT = 10_000;

export type StripeStandinOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Where events are POSTed; none means events are only recorded. */
  webhookUrl?: string | readonly string[];
  /** The endpoint signing secret (`whsec_...`); a random one when left out. */
  webhookSecret?: string;
  /** Default 5 attempts, 200 ms doubling. */
  retry?: RetryPolicy;
  /** Per delivery attempt (default 10 s). */
  webhookTimeoutMs?: number;
  /** Event types delivered (`*`, `charge.*` or exact types; default all). All are recorded. */
  enabledEvents?: readonly string[];
  /** Base URL put in `url` fields (pay page, portal, receipts) when browsers reach the stand-in
   * by another address; default the listening URL. */
  publicUrl?: string;
  /** Stamped on events as `api_version` (default that of stripe@23.1.0). */
  apiVersion?: string;
  /** Called after each delivery attempt (the CLI logs them). */
  onDelivery?: (delivery: Delivery) => void;
  /** The clock, in milliseconds since the epoch; for tests of expiry. */
  now?: () => number;
};

export type StripeStandin = {
  /** `http://host:port`: give the `stripe` client `host`, `port` and `protocol: "http"`. */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly webhookSecret: string;
  /** Stops the server and cancels queued and in-flight deliveries and their retry timers. */
  close(): Promise<void>;
  /** Every event so far, oldest first (delivered or not). */
  events(): readonly StripeEvent[];
  /** Every delivery attempt so far, oldest first. */
  deliveries(): readonly Delivery[];
  /** Pays an open Checkout Session as the pay page does; rejects (StripeApiError) if it is not open. */
  pay(sessionId: string, options?: PayOptions): Promise<PayResult>;
  /**
   * Saves a card on an open setup-mode session as its pay page does (`card` default 4242 4242
   * 4242 4242); rejects (StripeApiError) if it is not open or not in setup mode.
   */
  saveCard(sessionId: string, options?: Pick<PayOptions, "card" | "email">): Promise<SetupResult>;
  /**
   * Disputes a succeeded charge (`charge.dispute.created`, `charge.dispute.funds_withdrawn`),
   * submits evidence (`charge.dispute.updated`) and closes it (`charge.dispute.closed`, and
   * `charge.dispute.funds_reinstated` when won). As the `/__standin` controls do (disputes.ts).
   */
  disputes: {
    open(chargeId: string, options?: DisputeOptions): Promise<Dispute>;
    respond(disputeId: string, evidence?: string): Promise<Dispute>;
    close(disputeId: string, status: "won" | "lost"): Promise<Dispute>;
  };
  setWebhookUrl(url: string | readonly string[]): void;
  /** Resolves when no delivery is queued or in flight. */
  idle(): Promise<void>;
  /** Forgets every object, event and delivery; cancels queued deliveries. Keeps the endpoints. */
  reset(): Promise<void>;
};

type IdempotentResult = {
  route: string;
  params: string;
  status: number;
  body: string;
  requestId: string;
  storedAt: number;
};

type Context = {
  readonly store: StandinStore;
  readonly dispatcher: WebhookDispatcher;
  readonly apiVersion: string;
  readonly idempotency: Map<string, IdempotentResult>;
  readonly now: () => number;
};

export async function startStripeStandin(
  options: StripeStandinOptions = {},
): Promise<StripeStandin> {
  const host = options.host ?? "127.0.0.1";
  const now = options.now ?? Date.now;
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION;
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString("base64url")}`;
  const retry = options.retry ?? DEFAULT_RETRY;
  if (!Number.isInteger(retry.attempts) || retry.attempts < 1 || retry.baseDelayMs < 0) {
    throw new RangeError("retry.attempts must be an integer >= 1 and retry.baseDelayMs >= 0");
  }
  const dispatcher = new WebhookDispatcher(
    {
      secret: webhookSecret,
      retry,
      timeoutMs: options.webhookTimeoutMs ?? 10_000,
      enabledEvents: options.enabledEvents ?? ["*"],
      now,
      onDelivery: options.onDelivery,
    },
    urlList(options.webhookUrl),
  );
  let publicUrl = options.publicUrl?.replace(/\/+$/, "") ?? "";
  const store = new StandinStore({
    apiVersion,
    publicUrl: () => publicUrl,
    now,
    onEvent: (event) => dispatcher.enqueue(event),
  });
  const ctx: Context = { store, dispatcher, apiVersion, idempotency: new Map(), now };

  const server = createServer((req, res) => {
    handle(ctx, req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendStripeError(res, internalError(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  if (publicUrl === "") publicUrl = url;

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    host,
    webhookSecret,
    close() {
      closing ??= Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
        dispatcher.close(),
      ]).then(() => undefined);
      return closing;
    },
    events: () => [...store.events()],
    deliveries: () => dispatcher.deliveries(),
    pay: async (sessionId, payOptions) => store.pay(sessionId, payOptions),
    saveCard: async (sessionId, saveOptions) => store.saveCard(sessionId, saveOptions),
    disputes: {
      open: async (chargeId, disputeOptions) => store.disputeDesk.open(chargeId, disputeOptions),
      respond: async (disputeId, evidence) =>
        store.disputeDesk.respond(disputeId, evidence ?? null),
      close: async (disputeId, status) => store.disputeDesk.close(disputeId, status),
    },
    setWebhookUrl: (next) => dispatcher.setEndpoints(urlList(next)),
    idle: () => dispatcher.idle(),
    reset: () => resetAll(ctx),
  };
}

function urlList(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return (typeof value === "string" ? [value] : [...value]).filter((u) => u !== "");
}

async function resetAll(ctx: Context): Promise<void> {
  ctx.store.reset();
  ctx.idempotency.clear();
  await ctx.dispatcher.reset();
}

async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://stripe-standin.invalid");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const method = req.method ?? "GET";
  if (path === "/v1" || path.startsWith("/v1/")) return handleApi(ctx, req, res, url, path);
  if (path.startsWith("/__standin/")) return handleControl(ctx, req, res, path, method);

  const pay = /^\/pay\/([^/]+)(\/cancel)?$/.exec(path);
  if (pay !== null) return handlePayPage(ctx, req, res, url, decode(pay[1]), pay[2] !== undefined);
  const portal = /^\/portal\/([^/]+)$/.exec(path);
  if (portal !== null && method === "GET") {
    const session = ctx.store.portalSession(decode(portal[1]));
    const customer = session === undefined ? undefined : ctx.store.customer(session.customer);
    if (session === undefined || customer === undefined) {
      return sendHtml(res, 404, messagePage("Not found", "No such billing portal session."));
    }
    const charges = ctx.store
      .charges()
      .filter((charge) => charge.customer === customer.id && charge.status !== "failed")
      .reverse();
    return sendHtml(res, 200, portalPage(session, customer, charges));
  }
  const receipt = /^\/receipts\/([^/]+)$/.exec(path);
  if (receipt !== null && method === "GET") {
    const charge = ctx.store.charge(decode(receipt[1]));
    if (charge === undefined)
      return sendHtml(res, 404, messagePage("Not found", "No such receipt."));
    return sendHtml(res, 200, receiptPage(charge));
  }
  if (path === "/" && method === "GET") {
    return sendJson(res, 200, {
      name: "stripe stand-in",
      api: "/v1",
      webhooks: ctx.dispatcher.urls(),
    });
  }
  return sendStripeError(res, unrecognized(method, path));
}

function decode(segment: string | undefined): string {
  try {
    return decodeURIComponent(segment ?? "");
  } catch {
    return "";
  }
}

// --- /v1 ---

async function handleApi(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  path: string,
): Promise<void> {
  const requestId = newId("req", 14);
  const version = header(req, "stripe-version") ?? ctx.apiVersion;
  res.setHeader("request-id", requestId);
  res.setHeader("stripe-version", version);
  const method = req.method ?? "GET";
  // Only a POST has a body: the stripe client sends the parameters of GET and DELETE in the
  // query string.
  const body = method === "POST" ? await readBody(req) : "";

  const authError = authenticate(req);
  if (authError !== null) return sendStripeError(res, authError);
  if (body === null) {
    return sendStripeError(
      res,
      new StripeApiError(413, "invalid_request_error", "Request body too large."),
    );
  }
  const handler = routeApi(method, path);
  if (handler === undefined) return sendStripeError(res, unrecognized(method, path));

  const contentType = header(req, "content-type") ?? "";
  if (method === "POST" && body !== "" && !contentType.includes("x-www-form-urlencoded")) {
    return sendStripeError(
      res,
      invalidRequest(
        `Invalid request: Stripe's v1 API takes application/x-www-form-urlencoded bodies, not ${contentType || "an untyped body"}.`,
      ),
    );
  }

  let params: FormObject;
  try {
    params = decodeForm(method === "POST" ? body : url.search.slice(1));
  } catch (error) {
    return sendStripeError(res, asStripeError(error));
  }

  // Stripe: an idempotency key on a GET or a DELETE has no effect (both are idempotent already).
  const key = method === "POST" ? header(req, "idempotency-key") : undefined;
  const route = `${method} ${path}`;
  const canonical = canonicalParams(params);
  if (key !== undefined) {
    res.setHeader("idempotency-key", key);
    if (key.length > IDEMPOTENCY_KEY_MAX_CHARS) {
      return sendStripeError(
        res,
        invalidRequest(
          `Keys for idempotent requests can only be ${IDEMPOTENCY_KEY_MAX_CHARS} characters long.`,
          { param: "Idempotency-Key" },
        ),
      );
    }
    let earlier = ctx.idempotency.get(key);
    if (earlier !== undefined && ctx.now() - earlier.storedAt > IDEMPOTENCY_TTL_MS) {
      ctx.idempotency.delete(key);
      earlier = undefined;
    }
    if (earlier !== undefined) {
      const conflict = idempotencyConflict(earlier, key, route, canonical);
      if (conflict !== null) return sendStripeError(res, conflict);
      res.setHeader("idempotent-replayed", "true");
      res.setHeader("original-request", earlier.requestId);
      return sendRaw(res, earlier.status, earlier.body);
    }
  }

  let status = 200;
  let text: string;
  try {
    text = json(
      handler(ctx.store, {
        params,
        request: { id: requestId, idempotencyKey: key ?? null },
      }),
    );
  } catch (error) {
    const stripeError = asStripeError(error);
    // Like Stripe, a request refused before it changed anything keeps no idempotent result:
    // the same key may be retried with corrected parameters. One that ran and then failed (a
    // declined off-session charge) is saved like a success, so a retry cannot charge twice.
    if (!stripeError.executed) return sendStripeError(res, stripeError);
    status = stripeError.status;
    text = json(stripeError.toBody());
  }
  if (key !== undefined) {
    ctx.idempotency.set(key, {
      route,
      params: canonical,
      status,
      body: text,
      requestId,
      storedAt: ctx.now(),
    });
    if (ctx.idempotency.size > IDEMPOTENCY_KEY_LIMIT) {
      const oldest = ctx.idempotency.keys().next();
      if (oldest.done !== true) ctx.idempotency.delete(oldest.value);
    }
  }
  return sendRaw(res, status, text);
}

function idempotencyConflict(
  earlier: IdempotentResult,
  key: string,
  route: string,
  params: string,
): StripeApiError | null {
  if (earlier.route !== route) {
    return new StripeApiError(
      400,
      "idempotency_error",
      `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${earlier.route}' vs '${route}'). Try using a key other than '${key}' if you meant to execute a different request.`,
    );
  }
  if (earlier.params !== params) {
    return new StripeApiError(
      400,
      "idempotency_error",
      `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
    );
  }
  return null;
}

/** Any `sk_test_` key, as a Bearer token or as the Basic-auth user name (both work on Stripe). */
function authenticate(req: IncomingMessage): StripeApiError | null {
  const authorization = header(req, "authorization") ?? "";
  let key: string | null = null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  const basic = /^Basic\s+(\S+)\s*$/i.exec(authorization);
  if (bearer !== null) key = bearer[1] ?? null;
  else if (basic !== null)
    key =
      Buffer.from(basic[1] ?? "", "base64")
        .toString("utf8")
        .split(":")[0] ?? null;
  if (key === null || key === "") {
    return new StripeApiError(
      401,
      "invalid_request_error",
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
    );
  }
  if (!key.startsWith("sk_test_")) {
    return new StripeApiError(
      401,
      "invalid_request_error",
      `Invalid API Key provided: ${redactKey(key)}. The Stripe stand-in accepts test secret keys (sk_test_...) only.`,
      { code: "api_key_invalid" },
    );
  }
  return null;
}

/** Stripe shows the first characters and the last four of a bad key, never the whole key. */
function redactKey(key: string): string {
  const prefix = /^[a-z]+_(test|live)_/.exec(key)?.[0] ?? "";
  return `${prefix}${"*".repeat(4)}${key.length > prefix.length + 8 ? key.slice(-4) : ""}`;
}

function unrecognized(method: string, path: string): StripeApiError {
  return new StripeApiError(
    404,
    "invalid_request_error",
    `Unrecognized request URL (${method}: ${path}). The Stripe stand-in serves only the part of the API Parley uses; see packages/stripe-standin/README.md.`,
    { code: "resource_missing" },
  );
}

function asStripeError(error: unknown): StripeApiError {
  return error instanceof StripeApiError ? error : internalError(error);
}

/** A bug in the stand-in: the caller gets Stripe's 500 shape, the log gets the cause. */
function internalError(error: unknown): StripeApiError {
  process.stderr.write(
    `stripe stand-in: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return new StripeApiError(
    500,
    "api_error",
    "An unexpected error occurred in the Stripe stand-in.",
    {
      cause: error,
    },
  );
}

// --- Pay page ---

const PAY_OUTCOMES = new Set(["succeed", "decline", "async-succeed", "async-fail"]);

async function handlePayPage(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  sessionId: string,
  cancel: boolean,
): Promise<void> {
  const method = req.method ?? "GET";
  const session = ctx.store.checkoutSession(sessionId);
  if (session === undefined) {
    return sendHtml(res, 404, messagePage("Not found", "No such checkout session."));
  }
  if (cancel) {
    // Leaving the page does not end the session (Stripe keeps it open until it expires).
    return redirect(res, session.cancel_url ?? `/pay/${encodeURIComponent(session.id)}`);
  }
  // The Customer the session names fills the email field when the session gives none (pages.ts).
  const customerEmail =
    session.customer === null ? null : (ctx.store.customer(session.customer)?.email ?? null);
  if (method === "GET") {
    if (session.status !== "open")
      return sendHtml(res, 200, closedPage(session, failed(ctx, session)));
    return sendHtml(
      res,
      200,
      payPage(session, ctx.store.lineItems(session.id) ?? [], { customerEmail }),
    );
  }
  if (method !== "POST")
    return sendHtml(res, 405, messagePage("Method not allowed", "Use GET or POST."));

  const body = await readBody(req);
  const form = new URLSearchParams(body ?? "");
  if (session.status !== "open") {
    // A double submit, or a stale tab: nothing is charged twice.
    return sendHtml(
      res,
      session.status === "expired" ? 410 : 409,
      closedPage(session, failed(ctx, session)),
    );
  }
  if (session.mode === "setup") {
    const card = form.get("card") ?? undefined;
    try {
      ctx.store.saveCard(session.id, {
        ...(card === undefined ? {} : { card }),
        ...(form.get("email") ? { email: form.get("email") ?? undefined } : {}),
      });
    } catch (error) {
      // A mistyped number: the page again with Stripe's message, and nothing saved.
      if (!(error instanceof StripeApiError) || error.type !== "card_error") throw error;
      return sendHtml(
        res,
        error.status,
        payPage(session, [], {
          error: error.message,
          customerEmail,
          ...(card === undefined ? {} : { card }),
        }),
      );
    }
    return redirect(res, session.success_url === null ? `/pay/${session.id}` : successUrl(session));
  }
  const outcome =
    form.get("outcome") ??
    (url.searchParams.get("async") === "1"
      ? url.searchParams.get("fail") === "1"
        ? "async-fail"
        : "async-succeed"
      : url.searchParams.get("fail") === "1"
        ? "decline"
        : "succeed");
  if (!PAY_OUTCOMES.has(outcome)) {
    return sendHtml(res, 400, messagePage("Bad request", `Unknown outcome "${outcome}".`));
  }
  const options: PayOptions = {
    async: outcome === "async-succeed" || outcome === "async-fail",
    fail: outcome === "decline" || outcome === "async-fail",
    ...(form.get("email") ? { email: form.get("email") ?? undefined } : {}),
  };
  const result = ctx.store.pay(session.id, options);
  if (result.outcome === "declined") {
    const items = ctx.store.lineItems(session.id) ?? [];
    return sendHtml(
      res,
      402,
      payPage(session, items, { error: "Your card was declined.", customerEmail }),
    );
  }
  return redirect(res, session.success_url === null ? `/pay/${session.id}` : successUrl(session));
}

function failed(ctx: Context, session: CheckoutSession): boolean {
  const intent =
    session.payment_intent === null ? undefined : ctx.store.paymentIntent(session.payment_intent);
  return intent?.status === "requires_payment_method";
}

// --- /__standin ---

async function handleControl(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  method: string,
): Promise<void> {
  let body: Record<string, unknown>;
  try {
    body = method === "POST" ? await readJson(req) : {};
  } catch (error) {
    return sendStripeError(res, asStripeError(error));
  }
  const { store, dispatcher } = ctx;
  try {
    if (method === "GET" && path === "/__standin/events") {
      return sendJson(res, 200, {
        events: store.events(),
        deliveries: dispatcher.deliveries(),
        pending: dispatcher.pending(),
      });
    }
    if (method === "POST" && path === "/__standin/reset") {
      await resetAll(ctx);
      return sendJson(res, 200, { ok: true });
    }
    if (path === "/__standin/webhooks") {
      if (method === "POST") {
        const urls = body.urls;
        if (!Array.isArray(urls) || urls.some((u) => typeof u !== "string")) {
          throw invalidRequest("Expected { urls: string[] }.", { param: "urls" });
        }
        try {
          dispatcher.setEndpoints(urls as string[]);
        } catch (error) {
          throw invalidRequest(error instanceof Error ? error.message : "Invalid URL.", {
            param: "urls",
          });
        }
      }
      return sendJson(res, 200, { urls: dispatcher.urls(), pending: dispatcher.pending() });
    }
    const resend = /^\/__standin\/events\/([^/]+)\/resend$/.exec(path);
    if (method === "POST" && resend !== null) {
      const id = decode(resend[1]);
      const event = store.event(id);
      if (event === undefined) throw notFound("event", id);
      const target = body.url;
      if (target !== undefined && typeof target !== "string") {
        throw invalidRequest("url must be a string.", { param: "url" });
      }
      let urls: string[];
      try {
        urls = dispatcher.resend(event, target);
      } catch (error) {
        throw invalidRequest(error instanceof Error ? error.message : "Invalid URL.", {
          param: "url",
        });
      }
      return sendJson(res, 202, { id, urls });
    }
    const pay = /^\/__standin\/checkout\/sessions\/([^/]+)\/pay$/.exec(path);
    if (method === "POST" && pay !== null) {
      if (body.card !== undefined && typeof body.card !== "string") {
        throw invalidRequest("card must be a string of 16 digits.", { param: "card" });
      }
      const options: PayOptions = {
        async: flag(body, "async"),
        fail: flag(body, "fail"),
        ...(typeof body.email === "string" ? { email: body.email } : {}),
        ...(typeof body.card === "string" ? { card: body.card } : {}),
      };
      const result = store.complete(decode(pay[1]), options);
      if (result.outcome === "setup_succeeded") {
        return sendJson(res, 200, {
          outcome: result.outcome,
          session: result.session,
          setup_intent: result.setupIntent,
          payment_method: result.paymentMethod,
        });
      }
      return sendJson(res, 200, {
        outcome: result.outcome,
        session: result.session,
        payment_intent: result.paymentIntent,
        charge: result.charge,
      });
    }
    const dispute = disputeControl(store.disputeDesk, method, path, body);
    if (dispute !== undefined) return sendJson(res, 200, dispute);
    return sendStripeError(res, unrecognized(method, path));
  } catch (error) {
    return sendStripeError(res, asStripeError(error));
  }
}

function flag(body: Record<string, unknown>, key: string): boolean {
  const value = body[key];
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw invalidRequest(`${key} must be a boolean.`, { param: key });
  return value;
}

function notFound(kind: string, id: string): StripeApiError {
  return new StripeApiError(404, "invalid_request_error", `No such ${kind}: '${id}'`, {
    code: "resource_missing",
    param: "id",
  });
}

// --- Plumbing ---

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(buffer);
  }
  return tooLarge ? null : Buffer.concat(chunks).toString("utf8");
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (text === null) throw invalidRequest("Request body too large.");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest("The control API takes a JSON body.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest("The control API takes a JSON object.");
  }
  return value as Record<string, unknown>;
}

/** Stripe pretty-prints its JSON with two spaces. */
function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function sendRaw(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-cache, no-store",
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendRaw(res, status, json(value));
}

function sendStripeError(res: ServerResponse, error: StripeApiError): void {
  sendJson(res, error.status, error.toBody());
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
  });
  res.end(html);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, "content-length": 0 });
  res.end();
}

/**
 * Webhook signing and delivery, as Stripe does them. Each endpoint has its own queue: events go
 * out in the order they happened, one at a time, and a failing event is retried with exponential
 * backoff before the next one goes (Stripe itself does not promise order; a stand-in that keeps
 * it makes tests deterministic). Delivery never blocks the API: it runs on its own promise chain
 * and every wait is cancelled on `close()` or `reset()`.
 */
import { createHmac } from "node:crypto";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import type { StripeEvent } from "./objects.ts";

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<payload>" keyed with the whole secret>`. */
export function signatureHeader(payload: string, secret: string, timestampS: number): string {
  const signature = createHmac("sha256", secret).update(`${timestampS}.${payload}`).digest("hex");
  return `t=${timestampS},v1=${signature}`;
}

/** Stripe sends events pretty-printed: a receiver that re-serialises the JSON breaks the HMAC. */
export function eventPayload(event: StripeEvent): string {
  return JSON.stringify(event, null, 2);
}

export type RetryPolicy = {
  /** Attempts in all, the first included (default 5). */
  attempts: number;
  /** The wait before attempt n+1 is `baseDelayMs * 2^(n-1)` (default 200). */
  baseDelayMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 200 };

/** One delivery attempt of one event to one endpoint. */
export type Delivery = {
  readonly eventId: string;
  readonly eventType: string;
  readonly url: string;
  /** 1 for the first try. */
  readonly attempt: number;
  readonly startedAt: string;
  readonly durationMs: number;
  /** The endpoint's HTTP status, or null when no response came (connection refused, timeout). */
  readonly status: number | null;
  /** A 2xx status. */
  readonly ok: boolean;
  /** Why there was no response. */
  readonly error: string | null;
  /** The first 500 characters of the endpoint's answer, for debugging. */
  readonly responseBody: string | null;
  /** Whether another attempt follows (false after a success or the last attempt). */
  readonly willRetry: boolean;
};

export type DispatcherOptions = {
  secret: string;
  retry: RetryPolicy;
  /** Per attempt; Stripe gives up on an endpoint after some seconds too. */
  timeoutMs: number;
  /** Event types sent to endpoints; `*` (the default) is all. */
  enabledEvents: readonly string[];
  now: () => number;
  onDelivery?: (delivery: Delivery) => void;
};

const DELIVERY_LOG_LIMIT = 10_000;
const RESPONSE_BODY_CHARS = 500;

type Endpoint = { url: string; queue: StripeEvent[]; running: Promise<void> | null };

export class WebhookDispatcher {
  readonly #options: DispatcherOptions;
  readonly #endpoints = new Map<string, Endpoint>();
  readonly #oneOff = new Set<Endpoint>();
  readonly #log: Delivery[] = [];
  readonly #idleWaiters: Array<() => void> = [];
  readonly #httpAgent = new HttpAgent({ keepAlive: false });
  readonly #httpsAgent = new HttpsAgent({ keepAlive: false });
  #controller = new AbortController();
  #closed = false;

  constructor(options: DispatcherOptions, urls: readonly string[]) {
    this.#options = options;
    this.setEndpoints(urls);
  }

  get secret(): string {
    return this.#options.secret;
  }

  urls(): string[] {
    return [...this.#endpoints.keys()];
  }

  /** Replaces the endpoint list. Queues of endpoints that stay are kept; the others are dropped. */
  setEndpoints(urls: readonly string[]): void {
    for (const url of urls) checkUrl(url);
    for (const [url, endpoint] of this.#endpoints) {
      if (!urls.includes(url)) {
        endpoint.queue.length = 0;
        this.#endpoints.delete(url);
      }
    }
    for (const url of urls) {
      if (!this.#endpoints.has(url)) this.#endpoints.set(url, { url, queue: [], running: null });
    }
    this.#notifyIfIdle();
  }

  #enabled(type: string): boolean {
    return this.#options.enabledEvents.some(
      (pattern) =>
        pattern === "*" ||
        pattern === type ||
        (pattern.endsWith(".*") && type.startsWith(pattern.slice(0, -1))),
    );
  }

  /** Queues a new event for every endpoint that takes its type. */
  enqueue(event: StripeEvent): void {
    if (!this.#enabled(event.type)) return;
    for (const endpoint of this.#endpoints.values()) this.#push(endpoint, event);
  }

  /**
   * Sends an event again, same id and body (a replay test). To `url` when given, which need not
   * be a configured endpoint; otherwise to every configured endpoint. Returns the URLs queued.
   */
  resend(event: StripeEvent, url?: string): string[] {
    if (url === undefined) {
      for (const endpoint of this.#endpoints.values()) this.#push(endpoint, event);
      return this.urls();
    }
    checkUrl(url);
    const configured = this.#endpoints.get(url);
    if (configured !== undefined) {
      this.#push(configured, event);
    } else {
      // A one-off target: it gets this event only, never the new ones.
      const endpoint: Endpoint = { url, queue: [], running: null };
      this.#oneOff.add(endpoint);
      this.#push(endpoint, event, () => this.#oneOff.delete(endpoint));
    }
    return [url];
  }

  #push(endpoint: Endpoint, event: StripeEvent, onDrained?: () => void): void {
    if (this.#closed) return;
    event.pending_webhooks += 1;
    endpoint.queue.push(event);
    this.#start(endpoint, onDrained);
  }

  #start(endpoint: Endpoint, onDrained?: () => void): void {
    if (endpoint.running !== null || this.#closed) return;
    endpoint.running = this.#drain(endpoint, this.#controller.signal).finally(() => {
      endpoint.running = null;
      // Events queued after a reset, while the cancelled loop was winding down, need a new loop.
      if (endpoint.queue.length > 0 && !this.#closed) {
        this.#start(endpoint, onDrained);
        return;
      }
      onDrained?.();
      this.#notifyIfIdle();
    });
  }

  async #drain(endpoint: Endpoint, signal: AbortSignal): Promise<void> {
    // Let the caller finish the change that produced the event before its first attempt.
    await Promise.resolve();
    for (let event = endpoint.queue[0]; event !== undefined; event = endpoint.queue[0]) {
      if (signal.aborted) return;
      const { attempts, baseDelayMs } = this.#options.retry;
      for (let attempt = 1; attempt <= attempts; attempt++) {
        // The endpoint was removed (setEndpoints) while this event waited for a retry.
        if (endpoint.queue[0] !== event) break;
        const delivery = await this.#attempt(endpoint.url, event, attempt, signal);
        if (signal.aborted) return;
        this.#record(delivery);
        if (delivery.ok) {
          event.pending_webhooks = Math.max(0, event.pending_webhooks - 1);
          break;
        }
        if (!delivery.willRetry) break;
        try {
          await sleep(baseDelayMs * 2 ** (attempt - 1), undefined, { signal });
        } catch {
          return;
        }
      }
      if (endpoint.queue[0] === event) endpoint.queue.shift();
    }
  }

  async #attempt(
    url: string,
    event: StripeEvent,
    attempt: number,
    signal: AbortSignal,
  ): Promise<Delivery> {
    const started = this.#options.now();
    const payload = eventPayload(event);
    const header = signatureHeader(payload, this.#options.secret, Math.floor(started / 1000));
    const result = await this.#post(url, payload, header, signal);
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    return {
      eventId: event.id,
      eventType: event.type,
      url,
      attempt,
      startedAt: new Date(started).toISOString(),
      durationMs: Math.max(0, this.#options.now() - started),
      status: result.status,
      ok,
      error: result.error,
      responseBody: result.body,
      willRetry: !ok && attempt < this.#options.retry.attempts,
    };
  }

  #post(
    url: string,
    payload: string,
    signature: string,
    signal: AbortSignal,
  ): Promise<{ status: number | null; body: string | null; error: string | null }> {
    return new Promise((resolve) => {
      const target = new URL(url);
      const https = target.protocol === "https:";
      const req = (https ? httpsRequest : httpRequest)(
        target,
        {
          method: "POST",
          agent: https ? this.#httpsAgent : this.#httpAgent,
          signal,
          headers: {
            "content-type": "application/json; charset=utf-8",
            "content-length": Buffer.byteLength(payload),
            "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
            accept: "*/*; q=0.5, application/xml",
            "cache-control": "no-cache",
            "stripe-signature": signature,
          },
        },
        (res: IncomingMessage) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            if (body.length < RESPONSE_BODY_CHARS) body += chunk;
          });
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? null,
              body: body.slice(0, RESPONSE_BODY_CHARS),
              error: null,
            }),
          );
          res.on("error", (error: Error) =>
            resolve({ status: res.statusCode ?? null, body: null, error: error.message }),
          );
        },
      );
      req.setTimeout(this.#options.timeoutMs, () => {
        req.destroy(new Error(`no response within ${this.#options.timeoutMs} ms`));
      });
      req.on("error", (error: Error & { code?: string }) =>
        resolve({ status: null, body: null, error: error.code ?? error.message }),
      );
      req.end(payload);
    });
  }

  #record(delivery: Delivery): void {
    this.#log.push(delivery);
    if (this.#log.length > DELIVERY_LOG_LIMIT) this.#log.shift();
    this.#options.onDelivery?.(delivery);
  }

  deliveries(): readonly Delivery[] {
    return [...this.#log];
  }

  /** Events still queued, summed over endpoints (the one being attempted included). */
  pending(): number {
    let count = 0;
    for (const endpoint of this.#all()) count += endpoint.queue.length;
    return count;
  }

  #all(): Endpoint[] {
    return [...this.#endpoints.values(), ...this.#oneOff];
  }

  /** Resolves once every queue is empty: each event delivered or given up on. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    for (const endpoint of this.#all()) {
      if (endpoint.running !== null || endpoint.queue.length > 0) return false;
    }
    return true;
  }

  #notifyIfIdle(): void {
    if (!this.#isIdle()) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /** Drops every queued delivery and cancels the one in flight; the log is cleared too. */
  async reset(): Promise<void> {
    this.#log.length = 0;
    await this.#cancel();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#cancel();
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }

  /** Synchronous up to the await, so nothing can be queued between the abort and the clearing. */
  async #cancel(): Promise<void> {
    const previous = this.#controller;
    this.#controller = new AbortController();
    if (this.#closed) this.#controller.abort();
    previous.abort();
    const running: Promise<void>[] = [];
    for (const endpoint of this.#all()) {
      endpoint.queue.length = 0;
      if (endpoint.running !== null) running.push(endpoint.running);
    }
    await Promise.all(running);
    this.#notifyIfIdle();
  }
}

function checkUrl(url: string): void {
  const { protocol } = new URL(url);
  if (protocol !== "http:" && protocol !== "https:") {
    throw new TypeError(`Webhook URL must be http or https: ${url}`);
  }
}

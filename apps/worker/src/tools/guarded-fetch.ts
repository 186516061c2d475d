import { ToolCallError } from "./call-error.ts";
import { checkSourceUrl } from "./url-rule.ts";

/** What one call sent and read over the wire, for its record (sizes only, never content). */
export interface WireCount {
  requestBytes: number;
  responseBytes: number;
  /**
   * Whether the call's request may have reached the tenant's server (then the server may have
   * acted on it, and a priced call is charged): set as the request is handed to the network, and
   * taken back when the network says it never got there (no connection made, or Cloudflare's
   * edge answering that the origin could not be reached). See docs/2026-12-06-tools.md, "Which
   * failed calls are charged".
   */
  wentOut?: boolean;
}

export interface GuardOptions {
  /** `TOOL_SOURCES_ALLOW_PRIVATE`. */
  allowPrivate: string;
  /** The most of one response body read; more fails the call (`too_large`). */
  maxResponseBytes: number;
  /** Ends the request (the call's timeout, the person's stop). */
  signal?: AbortSignal | undefined;
  count?: WireCount | undefined;
  /** Hears each refusal, the ones raised while the body is read included (size). */
  onRefusal?: ((error: ToolCallError) => void) | undefined;
  /**
   * Whether this request is the call's own, the one that may make the server act (the HTTP
   * action's request; an MCP call's `tools/call`, not the connection's `initialize`): only it
   * sets `count.wentOut`. Default true.
   */
  acts?: boolean;
}

/**
 * Statuses Cloudflare's edge answers when it could not reach the origin, so the request never
 * got there: 521 (connection refused), 522 (the TCP connection timed out), 523 (origin
 * unreachable), 525 (TLS handshake failed), 526 (invalid certificate), 530 (with a 1xxx error:
 * the origin's name did not resolve, among others). A Worker's fetch in production gets these
 * as responses where workerd (pnpm dev, the tests) throws. 520 and 524 are not here: the
 * connection was made, and the request may have been read.
 */
const EDGE_NOT_REACHED = new Set([521, 522, 523, 525, 526, 530]);

const encoder = new TextEncoder();

function bodyBytes(body: BodyInit | null | undefined): number {
  if (body === null || body === undefined) return 0;
  if (typeof body === "string") return encoder.encode(body).byteLength;
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (ArrayBuffer.isView(body)) return body.byteLength;
  return 0;
}

/**
 * `fetch` for a tool source's requests, MCP and HTTP actions alike: the URL rule again at every
 * request (url-rule.ts), no redirect followed (`redirect: "manual"`, and a 3xx fails the call: a
 * redirect could lead a call to a private address the rule would refuse), and a response body cut
 * off at `maxResponseBytes` (the stream errors, so whoever reads it gets `too_large`).
 */
export async function guardedFetch(
  input: string | URL,
  init: RequestInit,
  options: GuardOptions,
): Promise<Response> {
  try {
    return await guarded(input, init, options);
  } catch (error) {
    if (error instanceof ToolCallError) options.onRefusal?.(error);
    throw error;
  }
}

async function guarded(input: string | URL, init: RequestInit, options: GuardOptions) {
  const url = typeof input === "string" ? input : input.href;
  const checked = checkSourceUrl(url, options.allowPrivate);
  if (!checked.ok) {
    throw new ToolCallError("url_refused", `The tool source's URL ${checked.reason}`);
  }
  const count = options.count;
  const sentBefore = count?.wentOut;
  if (count) {
    count.requestBytes += bodyBytes(init.body);
    if (options.acts !== false) count.wentOut = true;
  }
  /** The request never reached the server: `wentOut` as it was before it. */
  const notSent = () => {
    if (count && options.acts !== false) count.wentOut = sentBefore;
  };
  const signal = combine(init.signal ?? undefined, options.signal);
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: "manual", ...(signal ? { signal } : {}) });
  } catch (error) {
    // Stopped or timed out while in flight: the request may have reached the server.
    if (signal?.aborted) throw abortReason(signal);
    // The runtime gave no response at all: the connection was refused, the name did not resolve
    // or the TLS handshake failed (workerd's "Network connection lost." / "internal error"), so
    // the server got nothing to act on. Cloudflare's edge answers a connection lost after the
    // request was sent with a response (520, 524), which is charged.
    notSent();
    throw new ToolCallError("unreachable", "The tool's server could not be reached", {
      cause: error,
    });
  }
  if (EDGE_NOT_REACHED.has(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    notSent();
    throw new ToolCallError(
      "unreachable",
      `The tool's server could not be reached (${response.status})`,
    );
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    throw new ToolCallError(
      "redirect",
      `The tool's server answered with a redirect (${response.status}), which Parley does not follow`,
    );
  }
  if (!response.body) return response;
  const length = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(length) && length > options.maxResponseBytes) {
    await response.body.cancel().catch(() => undefined);
    throw tooLarge(options.maxResponseBytes);
  }
  let read = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (options.count) options.count.responseBytes += chunk.byteLength;
        if (read > options.maxResponseBytes) {
          const error = tooLarge(options.maxResponseBytes);
          options.onRefusal?.(error);
          controller.error(error);
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

const tooLarge = (max: number) =>
  new ToolCallError("too_large", `The tool's answer was larger than ${max} bytes`);

/** The error an aborted signal carries, as a call error. */
export function abortReason(signal: AbortSignal): ToolCallError {
  const reason: unknown = signal.reason;
  if (reason instanceof ToolCallError) return reason;
  return new ToolCallError("aborted", "The call was stopped");
}

function combine(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a) return b;
  if (!b) return a;
  return AbortSignal.any([a, b]);
}

/**
 * A call's deadline as a signal whose reason is the `timeout` error (the person's stop, when
 * given, aborts it too with its own reason).
 */
export function deadline(timeoutMs: number, stop?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(
        new ToolCallError("timeout", `The tool did not answer within ${timeoutMs} ms`),
      ),
    timeoutMs,
  );
  const onStop = () => {
    clearTimeout(timer);
    controller.abort(new ToolCallError("aborted", "The call was stopped"));
  };
  if (stop?.aborted) onStop();
  else stop?.addEventListener("abort", onStop, { once: true });
  controller.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  return controller.signal;
}

/** The first `ToolCallError` in an error's causes (the MCP client wraps what fetch threw). */
export function findCallError(error: unknown): ToolCallError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current; depth++) {
    if (current instanceof ToolCallError) return current;
    const record = current as { cause?: unknown; data?: { cause?: unknown } };
    current = record.cause ?? record.data?.cause;
  }
  return null;
}

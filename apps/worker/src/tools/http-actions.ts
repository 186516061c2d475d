import { ToolCallError } from "./call-error.ts";
import { guardedFetch, type WireCount } from "./guarded-fetch.ts";
import type { SourceCallRequest } from "./source-client.ts";

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const isPrimitive = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/**
 * The request an HTTP action makes: its path on the source's URL with each `{name}` filled from
 * the arguments (one encoded path segment each: a value cannot add segments; `.` and `..`, which
 * `encodeURIComponent` leaves as they are, are refused), the other arguments in the query of a
 * GET or DELETE and as the JSON body otherwise. The final URL, as `new URL` normalized it, must
 * be on the source's origin and under its base path whatever the path and the arguments are
 * (a stored path from before the path rule refused `%2e`, or anything the rule missed): else a
 * tool error, and no request is sent.
 */
export function actionRequest(
  sourceUrl: string,
  action: { method: string; path: string },
  args: Record<string, unknown>,
): { url: string; method: string; body: string | null } {
  const base = new URL(sourceUrl);
  const rest: Record<string, unknown> = { ...args };
  const path = action.path.replace(PLACEHOLDER, (_, name: string) => {
    const value = rest[name];
    if (!isPrimitive(value) || String(value) === "") {
      throw new ToolCallError("invalid_arguments", `The argument ${name} is needed in the path`);
    }
    const text = String(value);
    if (text === "." || text === "..") {
      throw new ToolCallError("invalid_arguments", `The argument ${name} cannot be . or ..`);
    }
    delete rest[name];
    return encodeURIComponent(text);
  });
  const basePath = base.pathname.replace(/\/+$/, "");
  const url = new URL(`${basePath}${path}`, base.origin);
  if (url.origin !== base.origin || !url.pathname.startsWith(`${basePath}/`)) {
    throw new ToolCallError("url_refused", "The action's URL leaves the source's URL");
  }
  let body: string | null = null;
  if (action.method === "GET" || action.method === "DELETE") {
    for (const [key, value] of Object.entries(rest)) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        url.searchParams.append(key, isPrimitive(item) ? String(item) : JSON.stringify(item));
      }
    }
  } else {
    body = JSON.stringify(rest);
  }
  if (url.origin !== base.origin) {
    throw new ToolCallError("url_refused", "The action's URL is not on the source's origin");
  }
  return { url: url.href, method: action.method, body };
}

/** What an HTTP action answered (2xx): its status and its body, as JSON when it is JSON. */
export interface HttpActionResult {
  status: number;
  body: unknown;
}

/**
 * Calls an HTTP action through the guarded fetch (URL rule, no redirects, size cap). A 2xx is
 * the result; any other status is a tool error whose message carries the start of the answer
 * (the model may use it: "no such order"); a body that says it is JSON but is not fails as
 * `malformed`.
 */
export async function callHttpAction(
  request: SourceCallRequest,
  options: {
    signal: AbortSignal;
    wire: WireCount;
    headers: Record<string, string>;
    allowPrivate: string;
  },
): Promise<HttpActionResult> {
  const { method, path } = request.tool;
  if (!method || !path)
    throw new ToolCallError("unknown_tool", "This action has no method or path");
  const built = actionRequest(request.source.url, { method, path }, request.args);
  const response = await guardedFetch(
    built.url,
    {
      method: built.method,
      headers: {
        ...options.headers,
        accept: "application/json, text/plain;q=0.9, */*;q=0.1",
        ...(built.body === null ? {} : { "content-type": "application/json" }),
      },
      ...(built.body === null ? {} : { body: built.body }),
    },
    {
      allowPrivate: options.allowPrivate,
      maxResponseBytes: request.maxResponseBytes,
      signal: options.signal,
      count: options.wire,
    },
  );
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    throw error;
  }
  const json = /\bjson\b/i.test(response.headers.get("content-type") ?? "");
  let body: unknown = text;
  if (json && text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      if (response.ok) {
        throw new ToolCallError("malformed", "The tool's server sent JSON that could not be read");
      }
    }
  }
  if (response.status === 401 || response.status === 403) {
    throw new ToolCallError(
      "unauthorized",
      `The tool's server refused Parley's identity token (${response.status})`,
    );
  }
  if (!response.ok) {
    const excerpt = text.replace(/\s+/g, " ").trim().slice(0, 300);
    throw new ToolCallError(
      "http_status",
      `The tool's server answered ${response.status}${excerpt ? `: ${excerpt}` : ""}`,
    );
  }
  return { status: response.status, body };
}

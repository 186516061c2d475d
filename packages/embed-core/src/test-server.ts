/**
 * A fake Parley (and host page) at the network edge for tests: a `fetch` that answers by method
 * and path and records every call, so the code under test runs exactly as in a browser.
 */
export interface Call {
  method: string;
  url: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  credentials: RequestCredentials | undefined;
}

export type Handler = (call: Call) => Response | Promise<Response> | undefined;

export const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export const apiError = (status: number, code: string, message: string, extra = {}) =>
  json({ error: { code, message, ...extra } }, status);

export function fakeNetwork(handler: Handler) {
  const calls: Call[] = [];
  const fetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input), "https://host.example");
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const call: Call = {
      method: init.method ?? "GET",
      url: url.href,
      path: `${url.pathname}${url.search}`,
      headers,
      body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
      credentials: init.credentials,
    };
    calls.push(call);
    const response = await handler(call);
    if (!response) throw new TypeError("Failed to fetch");
    return response;
  };
  return { fetch: fetch as typeof globalThis.fetch, calls };
}

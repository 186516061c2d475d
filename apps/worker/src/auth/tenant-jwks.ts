import type { JWK } from "jose";
import { checkWebhookUrl } from "../billing/webhook-url.ts";

/**
 * Fetches a tenant's JWKS (apps verified by `jwks`) from inside the platform, so the URL is an SSRF
 * path like an alert webhook's and gets the same rule (billing/webhook-url.ts): https to a public
 * host, unless `JWKS_ALLOW_PRIVATE` lists the host (the dev setting; empty in production). The rule
 * is applied when the app is saved and again before every fetch. Redirects are not followed (one
 * could lead to a private address), the answer must come within FETCH_TIMEOUT_MS and be at most
 * MAX_JWKS_BYTES. A key set is kept per isolate for CACHE_MS; a token whose `kid` is not in it
 * makes one early refetch at most every REFETCH_COOLDOWN_MS (the tenant rotated its keys); while
 * the URL fails, the set fetched last is used for up to an hour.
 */

export const FETCH_TIMEOUT_MS = 3_000;
export const CACHE_MS = 5 * 60_000;
export const REFETCH_COOLDOWN_MS = 30_000;
export const MAX_JWKS_BYTES = 64 * 1024;
/** How long a key set already fetched is used while its URL fails. */
const STALE_MS = 60 * 60_000;
const MAX_KEYS = 50;
const MAX_CACHED_URLS = 500;

interface Cached {
  keys: JWK[];
  fetchedAt: number;
}

const cache = new Map<string, Cached>();
/** When each URL last failed to load (per isolate, like the cache). */
const failures = new Map<string, number>();

/** Why a JWKS URL may not be used, or null (`allowPrivate` is `JWKS_ALLOW_PRIVATE`). */
export function jwksUrlProblem(url: string, allowPrivate: string): string | null {
  const check = checkWebhookUrl(url, allowPrivate);
  return check.ok ? null : check.reason;
}

export class JwksFetchError extends Error {
  override name = "JwksFetchError";
}

async function readCapped(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JWKS_BYTES) {
      await reader.cancel();
      throw new JwksFetchError(`larger than ${MAX_JWKS_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

async function fetchKeys(url: string, allowPrivate: string): Promise<Cached> {
  const problem = jwksUrlProblem(url, allowPrivate);
  if (problem) throw new JwksFetchError(`URL refused: ${problem}`);
  const response = await fetch(url, {
    headers: { accept: "application/json" },
    redirect: "manual",
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new JwksFetchError(`answered ${response.status}`);
  }
  const text = await readCapped(response);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new JwksFetchError("not JSON");
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length > MAX_KEYS) {
    throw new JwksFetchError("not a JWKS (a keys array of at most 50)");
  }
  return {
    keys: keys.filter((k): k is JWK => typeof k === "object" && k !== null && !Array.isArray(k)),
    fetchedAt: Date.now(),
  };
}

/**
 * The keys served at `url`: from the cache when fresh, else fetched.
 * `refresh` asks for a refetch unless the cached set is younger than the cooldown.
 */
export async function tenantJwks(
  env: Env,
  url: string,
  options: { refresh?: boolean } = {},
): Promise<{ keys: JWK[]; fetchedAt: number }> {
  const now = Date.now();
  const cached = cache.get(url);
  const fresh = cached && now - cached.fetchedAt < CACHE_MS;
  const cooling = cached && now - cached.fetchedAt < REFETCH_COOLDOWN_MS;
  if (cached && fresh && (!options.refresh || cooling)) return cached;
  // Each request fetches for itself: a promise of another request's I/O may not be awaited in
  // workerd. Only the parsed keys (plain data) are shared, and the rate limits bound the fetches.
  // A URL that failed lately is not fetched again until the cooldown has passed: every exchange
  // against a down (or hanging) server would otherwise wait for it and send it a request.
  const failedAt = failures.get(url);
  const failing = failedAt !== undefined && now - failedAt < REFETCH_COOLDOWN_MS;
  let fetched: Cached;
  try {
    if (failing) throw new Error("the key set failed to load lately");
    fetched = await fetchKeys(url, env.JWKS_ALLOW_PRIVATE ?? "");
  } catch (error) {
    if (!failing) {
      failures.delete(url);
      failures.set(url, now);
      if (failures.size > MAX_CACHED_URLS) failures.delete(failures.keys().next().value ?? "");
    }
    // The tenant's server is down or misbehaving: the keys it served within the hour still hold.
    if (cached && now - cached.fetchedAt < STALE_MS) return cached;
    throw error;
  }
  failures.delete(url);
  cache.delete(url);
  cache.set(url, fetched);
  if (cache.size > MAX_CACHED_URLS) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  return fetched;
}

import { type EmbedError, fail, networkError, type Result, readError } from "./errors.ts";

/**
 * What the host page's token source answers. Either a tenant-signed JWT that Parley exchanges
 * (`POST /api/embed/token`), or an end-user access token the host's server already minted with an
 * API key (`POST /api/apps/:appId/end-user-tokens`).
 */
export type TokenAnswer = { token: string } | { accessToken: string; expiresIn: number };

/** The host page's way to get a token: called again on every refresh (tenant tokens are short). */
export type GetToken = () => Promise<TokenAnswer>;

/** The end user a token was issued for, when the answer said (the exchange and the mint do). */
export interface EndUserRef {
  id: string;
  externalId: string;
}

export interface TokenManagerOptions {
  appId: string;
  /** Parley's origin, e.g. `https://parley.example` (no trailing slash needed). */
  parleyUrl: string;
  getToken: GetToken;
  fetch?: typeof fetch;
  now?: () => number;
}

/**
 * A token is used for this share of its lifetime, then replaced on the next call: refreshing
 * ahead of expiry means a request never leaves with a token that expires on the way. Lazily, not
 * on a timer: an idle tab does not call the host's token URL every few minutes.
 */
export const REFRESH_AT = 0.8;

interface Held {
  value: string;
  refreshAt: number;
  expiresAt: number;
}

const invalid = (message: string): EmbedError => ({
  code: "invalid_response",
  status: 0,
  message,
});

const tokenUnavailable = (status: number): EmbedError => ({
  code: "token_unavailable",
  status,
  message: "This page could not sign you in to the assistant. Reload the page or sign in again.",
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null;

/**
 * A token source that POSTs to a URL of the host page's own origin with its cookies (the host
 * knows who is signed in there) and reads the JSON answer.
 */
export function tokenUrlSource(url: string, doFetch: typeof fetch = fetch): GetToken {
  return async () => {
    const response = await doFetch(url, {
      method: "POST",
      credentials: "include",
      headers: { accept: "application/json" },
    });
    if (!response.ok) throw new TokenSourceError(response.status);
    return (await response.json()) as TokenAnswer;
  };
}

/** The token URL answered with an error status (401: nobody is signed in on the host). */
export class TokenSourceError extends Error {
  readonly status: number;
  constructor(status: number) {
    super(`token source answered ${status}`);
    this.name = "TokenSourceError";
    this.status = status;
  }
}

export interface TokenManager {
  /**
   * A token to send, refreshed first when it is past REFRESH_AT of its life or has less than
   * `minValidityMs` left (a connect ticket wants a token that outlives the socket's first
   * minutes). At most one refresh runs at a time; concurrent callers share it.
   */
  accessToken(minValidityMs?: number): Promise<Result<string>>;
  /** A request with this token drew a 401: drop it, so the next call refreshes (once). */
  invalidate(token: string): void;
  /** Who the current token is for, when its answer said. */
  endUser(): EndUserRef | null;
}

export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.now ?? Date.now;
  const base = options.parleyUrl.replace(/\/+$/, "");
  let held: Held | null = null;
  let who: EndUserRef | null = null;
  let refreshing: Promise<Result<string>> | null = null;

  async function exchange(token: string): Promise<Result<unknown>> {
    let response: Response;
    try {
      response = await doFetch(`${base}/api/embed/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ appId: options.appId, token }),
      });
    } catch {
      return fail(networkError());
    }
    if (!response.ok) return fail(await readError(response));
    try {
      return { ok: true, data: await response.json() };
    } catch {
      return fail(invalid("The token exchange did not answer JSON."));
    }
  }

  async function obtain(): Promise<Result<string>> {
    let answer: unknown;
    try {
      answer = await options.getToken();
    } catch (error) {
      return fail(tokenUnavailable(error instanceof TokenSourceError ? error.status : 0));
    }
    if (isRecord(answer) && typeof answer.token === "string" && !("accessToken" in answer)) {
      const exchanged = await exchange(answer.token);
      if (!exchanged.ok) return exchanged;
      answer = exchanged.data;
    }
    if (
      !isRecord(answer) ||
      typeof answer.accessToken !== "string" ||
      answer.accessToken === "" ||
      typeof answer.expiresIn !== "number" ||
      !Number.isFinite(answer.expiresIn) ||
      answer.expiresIn <= 0
    ) {
      return fail(
        invalid("The token source answered neither { token } nor { accessToken, expiresIn }."),
      );
    }
    const issued = now();
    const lifetimeMs = answer.expiresIn * 1000;
    held = {
      value: answer.accessToken,
      refreshAt: issued + lifetimeMs * REFRESH_AT,
      expiresAt: issued + lifetimeMs,
    };
    const endUser = answer.endUser;
    if (isRecord(endUser) && typeof endUser.id === "string") {
      who = {
        id: endUser.id,
        externalId: typeof endUser.externalId === "string" ? endUser.externalId : "",
      };
    }
    return { ok: true, data: answer.accessToken };
  }

  function refresh(): Promise<Result<string>> {
    refreshing ??= obtain().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  return {
    async accessToken(minValidityMs = 0) {
      const at = now();
      if (held && at < held.refreshAt && held.expiresAt - at > minValidityMs) {
        return { ok: true, data: held.value };
      }
      // One refresh per call, even when the new token is shorter than asked (a tenant token
      // near its end bounds the end-user token): asking again would only loop.
      return refresh();
    },
    invalidate(token) {
      if (held?.value === token) held = null;
    },
    endUser: () => who,
  };
}

import type {
  AuthResult,
  BillingSummary,
  ErrorCode,
  LimitStatus,
  Login,
  Me,
  Page,
  Session,
  BillingAlert as SharedBillingAlert,
  Signup,
} from "@parley/shared";

/** The spend controls and alert settings of an org, as `PATCH .../billing/settings` answers them. */
export type BillingSettings = Pick<
  BillingSummary,
  | "orgMonthlyLimitMicros"
  | "memberDailyLimitMicros"
  | "lowBalanceMicros"
  | "runwayAlertDays"
  | "alertWebhookUrl"
  | "limitWarningPct"
>;

/**
 * A threshold alert that fired, with its webhook delivery (`GET .../billing/alerts`): the worker
 * words it (`message`) and its period (`period`, null for low balance). The app and the worker
 * ship together, so there is no older shape to read.
 */
export type BillingAlert = SharedBillingAlert;

/** Filters of the activity list; dates are `YYYY-MM-DD` (from inclusive, to exclusive). */
export interface ActivityFilters {
  member?: string;
  project?: string;
  session?: string;
  model?: string;
  from?: string;
  to?: string;
}

export type ErasureStatus = "pending" | "running" | "completed" | "failed";

/** One store the erasure job clears, in order. */
export interface ErasureStep {
  name: string;
  status: "pending" | "done" | "skipped" | "failed";
  at: string | null;
  detail: string | null;
}

/** An erasure request; the subject is kept only as a keyed hash. */
export interface ErasureRequest {
  id: string;
  orgId: string | null;
  status: ErasureStatus;
  subject: { type: string; hash: string };
  legalBasis: string;
  reason: string | null;
  requestedBy: string | null;
  steps: ErasureStep[];
  verification: unknown;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

/** Query of the usage report; dates are `YYYY-MM-DD` (from inclusive, to exclusive). */
export interface UsageRange {
  from?: string;
  to?: string;
  /** One member's usage (owners and admins; a member's report is always their own). */
  memberId?: string;
}

export const queryString = (params: Record<string, string | undefined>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
};

/** Codes of the public contract, plus `network` when no answer came back at all. */
export type ApiErrorCode = ErrorCode | "network";

/**
 * Every failed call. `message` is safe to show; `field` names the offending input when known, and
 * `issues` every problem of it when there were several (the first is `field`).
 */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly field: string | undefined;
  readonly issues: { field: string; message: string }[];

  constructor(
    code: ApiErrorCode,
    message: string,
    status: number,
    field?: string,
    issues: { field: string; message: string }[] = [],
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.field = field;
    this.issues = issues;
  }
}

export const isApiError = (value: unknown): value is ApiError => value instanceof ApiError;

/** A user-facing sentence for any thrown value. */
export function errorMessage(error: unknown): string {
  if (isApiError(error)) return error.message;
  return "Something went wrong. Please try again.";
}

interface ErrorEnvelope {
  error?: { code?: unknown; message?: unknown; field?: unknown; issues?: unknown };
}

async function toApiError(response: Response): Promise<ApiError> {
  let body: ErrorEnvelope | undefined;
  try {
    body = (await response.json()) as ErrorEnvelope;
  } catch {
    body = undefined;
  }
  const error = body?.error;
  const code = typeof error?.code === "string" ? (error.code as ErrorCode) : fallbackCode(response);
  const message =
    typeof error?.message === "string" ? error.message : `Request failed (${response.status})`;
  const field = typeof error?.field === "string" ? error.field : undefined;
  const issues = Array.isArray(error?.issues)
    ? error.issues.flatMap((issue: { field?: unknown; message?: unknown }) =>
        typeof issue?.field === "string" && typeof issue.message === "string"
          ? [{ field: issue.field, message: issue.message }]
          : [],
      )
    : [];
  return new ApiError(code, message, response.status, field, issues);
}

function fallbackCode(response: Response): ErrorCode {
  if (response.status === 401) return "unauthorized";
  if (response.status === 404) return "not_found";
  if (response.status === 413) return "payload_too_large";
  return "internal";
}

export interface ApiClientOptions {
  /** Injected in tests; the browser's fetch otherwise. */
  fetch?: typeof fetch;
  /** Clock in milliseconds, for token expiry. */
  now?: () => number;
  /** A refresh request the page started before the app loaded (public/boot.js), handed out once. */
  takeEarlyRefresh?: () => Promise<Response> | undefined;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

const unreachable = () =>
  new ApiError("network", "Cannot reach the server. Check your connection.", 0);

/**
 * The typed HTTP client. The access token lives only in memory (never in storage, out of reach of
 * other tabs' scripts); the refresh token is an HttpOnly cookie the browser sends to /api/auth only.
 * A 401 triggers one refresh through that cookie and one retry; concurrent 401s share the refresh.
 */
export function createApiClient(options: ApiClientOptions = {}) {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.now ?? Date.now;
  let token: { value: string; expiresAt: number } | null = null;
  let refreshing: Promise<AuthResult> | null = null;
  /**
   * Set by `logout` until the next sign-in. A page still on screen while the sign-out ends its
   * session (a chat whose socket the server closes, a query that refetches) gets `unauthorized`
   * here, with no request that can only fail (a 401, and a refresh refused after it).
   */
  let signedOut = false;
  const signedOutError = () => new ApiError("unauthorized", "You are signed out", 401);
  const listeners = new Set<(signedIn: boolean) => void>();

  const setToken = (result: AuthResult | null) => {
    token = result
      ? { value: result.accessToken, expiresAt: now() + result.expiresIn * 1000 }
      : null;
    for (const listener of listeners) listener(token !== null);
  };

  async function send(method: Method, path: string, body: unknown, auth: boolean) {
    // A call made while the page's first refresh is on its way waits for it, rather than going
    // without a token, drawing a 401 and refreshing again.
    if (auth && token === null && refreshing) await refreshing.catch(() => undefined);
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (auth && token) headers.authorization = `Bearer ${token.value}`;
    try {
      return await doFetch(path, {
        method,
        headers,
        credentials: "same-origin",
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw unreachable();
    }
  }

  /** Exchanges the refresh cookie for a new access token; one request at a time. */
  function refresh(): Promise<AuthResult> {
    if (signedOut) return Promise.reject(signedOutError());
    refreshing ??= (async () => {
      try {
        // The page's first refresh may already be on its way (public/boot.js): taken once.
        const early = options.takeEarlyRefresh?.();
        const response = early
          ? await early.catch(() => {
              throw unreachable();
            })
          : await send("POST", "/api/auth/refresh", undefined, false);
        if (!response.ok) {
          setToken(null);
          throw await toApiError(response);
        }
        const result = (await response.json()) as AuthResult;
        setToken(result);
        return result;
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

  /** An authorized call with one refresh-and-retry on 401; a failed answer throws ApiError. */
  async function authorized(method: Method, path: string, body?: unknown): Promise<Response> {
    if (signedOut) throw signedOutError();
    let response = await send(method, path, body, true);
    if (response.status === 401) {
      await refresh();
      response = await send(method, path, body, true);
    }
    if (!response.ok) throw await toApiError(response);
    return response;
  }

  async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const response = await authorized(method, path, body);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  async function authenticate(path: string, body: unknown): Promise<AuthResult> {
    const response = await send("POST", path, body, false);
    if (!response.ok) throw await toApiError(response);
    const result = (await response.json()) as AuthResult;
    signedOut = false;
    setToken(result);
    return result;
  }

  const enc = encodeURIComponent;

  /** A POST that needs no sign-in (and sends no token); a failed answer throws ApiError. */
  async function publicPost<T>(path: string, body: unknown): Promise<T> {
    const response = await send("POST", path, body, false);
    if (!response.ok) throw await toApiError(response);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** A token valid for at least `minValidityMs` more, refreshed when it is not. */
  async function accessToken(minValidityMs = 60_000): Promise<string> {
    if (token && token.expiresAt - now() > minValidityMs) return token.value;
    return (await refresh()).accessToken;
  }

  return {
    accessToken,
    hasToken: () => token !== null,
    /**
     * Whether a refresh cookie may be there (the server sets the readable `parley_signed_in` beside
     * the HttpOnly one): without it a page load skips the refresh that could only fail.
     */
    mayHaveSession: () =>
      typeof document !== "undefined" &&
      /(?:^|;\s*)parley_signed_in=1(?:;|$)/.test(document.cookie),
    /**
     * A single-use ticket for opening one agent's WebSocket (the browser cannot send a header on
     * the upgrade, and a token in the URL would be logged). Asked with a token good for at least
     * five more minutes: the server closes the socket (1013) when that token expires, and the
     * chat reconnects with a fresh ticket.
     */
    async connectTicket(agent: "onboarding-agent" | "assistant-agent", name: string) {
      await accessToken(5 * 60_000);
      const issued = await request<{ ticket: string; expiresAt: string }>(
        "POST",
        "/api/connect-tickets",
        { agent, name },
      );
      return issued.ticket;
    },
    onAuthChange(listener: (signedIn: boolean) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Restores a session from the refresh cookie after a page load. */
    refresh,
    signup: (input: Signup) => authenticate("/api/auth/signup", input),
    login: (input: Login) => authenticate("/api/auth/login", input),
    async logout(): Promise<void> {
      signedOut = true;
      try {
        await send("POST", "/api/auth/logout", undefined, false);
      } finally {
        setToken(null);
      }
    },
    /** An authorized fetch of any path (agents' `get-messages`), with the same refresh rule. */
    get: <T>(path: string) => request<T>("GET", path),
    /** Any authorized call, for the typed clients of other features (`lib/assistants-api.ts`). */
    call: <T>(method: Method, path: string, body?: unknown) => request<T>(method, path, body),
    /** A POST that needs no sign-in (no token sent), for the same (`lib/mail-api.ts`). */
    publicPost,

    me: () => request<Me>("GET", "/api/me"),
    /** A new display name (the email changes through `changeEmail`, verified first). */
    updateMe: (input: { name?: string }) => request<Me>("PATCH", "/api/me", input),
    /** Ends every other sign-in of the account. */
    changePassword: (input: { currentPassword: string; newPassword: string }) =>
      request<void>("POST", "/api/me/password", input),
    sessions: (projectId: string, cursor?: string) =>
      request<Page<Session>>(
        "GET",
        `/api/projects/${enc(projectId)}/sessions${queryString({ cursor })}`,
      ),
    createSession: (projectId: string, title?: string) =>
      request<Session>(
        "POST",
        `/api/projects/${enc(projectId)}/sessions`,
        title === undefined ? {} : { title },
      ),
    session: (sessionId: string) => request<Session>("GET", `/api/sessions/${enc(sessionId)}`),
    renameSession: (sessionId: string, title: string) =>
      request<Session>("PATCH", `/api/sessions/${enc(sessionId)}`, { title }),
    /** Erases the session (its transcript everywhere); the ledger keeps what it cost. */
    deleteSession: (sessionId: string) =>
      request<unknown>("DELETE", `/api/sessions/${enc(sessionId)}`),
    billing: (orgId: string) => request<BillingSummary>("GET", `/api/orgs/${enc(orgId)}/billing`),
    /** The usage CSV as a Blob: the endpoint needs the bearer token, so a plain link cannot fetch it. */
    async usageCsv(orgId: string, range: UsageRange = {}): Promise<Blob> {
      const response = await authorized(
        "GET",
        `/api/orgs/${enc(orgId)}/billing/usage.csv${queryString({ ...range })}`,
      );
      return response.blob();
    },
    /** The limits on the caller's calls in a session's project (the chat's warning). */
    sessionLimits: (sessionId: string) =>
      request<LimitStatus>("GET", `/api/sessions/${enc(sessionId)}/limits`),
    /** Files the erasure of the caller's own account; the refresh cookie is gone afterwards. */
    async deleteAccount(): Promise<ErasureRequest> {
      const result = await request<ErasureRequest>("DELETE", "/api/me", { confirm: true });
      setToken(null);
      return result;
    },
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

declare global {
  interface Window {
    /** The refresh public/boot.js started before the app's script ran (returning visitors). */
    __parleyEarlyRefresh?: Promise<Response>;
  }
}

/** The app's one client. */
export const api: ApiClient = createApiClient({
  takeEarlyRefresh: () => {
    const early = window.__parleyEarlyRefresh;
    window.__parleyEarlyRefresh = undefined;
    return early;
  },
});

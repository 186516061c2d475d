import type {
  ChatOpening,
  CitedPassage,
  EndUserToolCall,
  LimitStatus,
  Page,
  Session,
} from "@parley/shared";
import { fail, networkError, type Result, readError } from "./errors.ts";
import { createTokenManager, type EndUserRef, type GetToken, type TokenManager } from "./tokens.ts";

/** `GET /api/embed/me`: who the end user is and what the app allows them. */
export interface EmbedMe {
  endUser: { id: string; externalId: string; name: string | null };
  app: {
    id: string;
    name: string;
    /** Whether end users see what each reply cost (the app's setting). */
    showCost: boolean;
    projects: { id: string; name: string }[];
  };
}

export interface ConnectTicket {
  ticket: string;
  expiresAt: string;
}

export interface EmbedClientOptions {
  appId: string;
  /** Parley's origin (the `parley-url` attribute, or the origin the script was loaded from). */
  parleyUrl: string;
  getToken: GetToken;
  fetch?: typeof fetch;
  now?: () => number;
}

/**
 * The client's token is asked for with this much life left before a connect ticket: the server
 * may close a socket when the token its ticket was issued under expires, and the chat then
 * reconnects with a new ticket (the same rule as the web app's).
 */
const TICKET_TOKEN_MS = 5 * 60_000;

type Method = "GET" | "POST" | "PATCH";

/**
 * The embed's view of Parley: the end-user API with its bearer token attached, refreshed ahead of
 * expiry and once more after a 401. Every call returns a Result; nothing here throws for an
 * answer the server gave.
 */
export interface EmbedClient {
  readonly appId: string;
  /** Parley's origin without a trailing slash. */
  readonly parleyUrl: string;
  /** The host (and port) of Parley's origin, as the chat socket wants it. */
  readonly host: string;
  readonly tokens: TokenManager;
  me(): Promise<Result<EmbedMe>>;
  /**
   * How a new chat in one of the app's projects opens: the welcome and suggested prompts of the
   * profile the end user's chats there run (null and none: Parley's own words).
   */
  opening(projectId: string): Promise<Result<ChatOpening>>;
  sessions(options?: { limit?: number; cursor?: string }): Promise<Result<Page<Session>>>;
  createSession(input?: { projectId?: string; title?: string }): Promise<Result<Session>>;
  renameSession(sessionId: string, title: string): Promise<Result<Session>>;
  connectTicket(sessionId: string): Promise<Result<ConnectTicket>>;
  /** The session's transcript (UIMessage[] as the agent stores it). */
  messages(sessionId: string): Promise<Result<unknown[]>>;
  /** The limits on the end user's calls in the session, for the warning before a hard stop. */
  limits(sessionId: string): Promise<Result<LimitStatus>>;
  /**
   * What the assistant did in the tenant's product for the end user in the session, newest first,
   * a page at a time (`cursor`: the previous page's `nextCursor`).
   */
  toolCalls(
    sessionId: string,
    page?: { limit?: number; cursor?: string },
  ): Promise<Result<Page<EndUserToolCall>>>;
  /**
   * A passage a reply cited (its sources), from a document of the app's projects: `version` is
   * the one the citation names (`gone` once the document was replaced).
   */
  passage(citation: {
    documentId: string;
    chunkId: string;
    version: number;
  }): Promise<Result<CitedPassage>>;
  endUser(): EndUserRef | null;
}

export function createEmbedClient(options: EmbedClientOptions): EmbedClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const parleyUrl = options.parleyUrl.replace(/\/+$/, "");
  const tokens = createTokenManager({ ...options, parleyUrl, fetch: doFetch });
  const enc = encodeURIComponent;

  async function call<T>(
    method: Method,
    path: string,
    body?: unknown,
    minValidityMs = 0,
  ): Promise<Result<T>> {
    // A 401 may mean the token was revoked or the clocks disagree: one new token, one retry.
    for (let attempt = 0; ; attempt++) {
      const token = await tokens.accessToken(minValidityMs);
      if (!token.ok) return token;
      const headers: Record<string, string> = { authorization: `Bearer ${token.data}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      let response: Response;
      try {
        response = await doFetch(`${parleyUrl}${path}`, {
          method,
          headers,
          // The bearer header is the credential; Parley's cookies are not the embed's business.
          credentials: "omit",
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      } catch {
        return fail(networkError());
      }
      if (response.status === 401 && attempt === 0) {
        tokens.invalidate(token.data);
        continue;
      }
      if (!response.ok) return fail(await readError(response));
      try {
        return { ok: true, data: (await response.json()) as T };
      } catch {
        return fail({
          code: "invalid_response",
          status: response.status,
          message: "The assistant answered something unreadable.",
        });
      }
    }
  }

  const query = (params: Record<string, string | number | undefined>) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params))
      if (value !== undefined) search.set(key, String(value));
    const text = search.toString();
    return text === "" ? "" : `?${text}`;
  };

  return {
    appId: options.appId,
    parleyUrl,
    host: new URL(parleyUrl).host,
    tokens,
    me: () => call("GET", "/api/embed/me"),
    opening: (projectId) => call("GET", `/api/embed/projects/${enc(projectId)}/opening`),
    sessions: (page = {}) =>
      call("GET", `/api/embed/sessions${query({ limit: page.limit, cursor: page.cursor })}`),
    createSession: (input = {}) => call("POST", "/api/embed/sessions", input),
    renameSession: (sessionId, title) =>
      call("PATCH", `/api/embed/sessions/${enc(sessionId)}`, { title }),
    connectTicket: (sessionId) =>
      call("POST", "/api/embed/connect-tickets", { sessionId }, TICKET_TOKEN_MS),
    messages: (sessionId) => call("GET", `/agents/assistant-agent/${enc(sessionId)}/get-messages`),
    limits: (sessionId) => call("GET", `/api/embed/sessions/${enc(sessionId)}/limits`),
    toolCalls: (sessionId, page = {}) =>
      call(
        "GET",
        `/api/embed/sessions/${enc(sessionId)}/tool-calls${query({ limit: page.limit, cursor: page.cursor })}`,
      ),
    passage: ({ documentId, chunkId, version }) =>
      call(
        "GET",
        `/api/embed/documents/${enc(documentId)}/passages/${enc(chunkId)}${query({ version })}`,
      ),
    endUser: () => tokens.endUser(),
  };
}

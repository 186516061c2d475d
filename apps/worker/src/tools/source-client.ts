import { DurableObject } from "cloudflare:workers";
import { AsyncLocalStorage } from "node:async_hooks";
import { Lifecycle } from "agents/lifecycle";
import { MCPClientManager } from "agents/mcp/client";
import { signToolCallToken, type ToolCallIdentity } from "../auth/tokens.ts";
import { config } from "../env.ts";
import { asToolCallError, isToolCallError, ToolCallError } from "./call-error.ts";
import { openCredential } from "./credential.ts";
import { deadline, guardedFetch, type WireCount } from "./guarded-fetch.ts";
import { callHttpAction } from "./http-actions.ts";
import {
  connectError,
  type ListedTool,
  mcpError,
  refusalOfStatus,
  rpcMethodOf,
} from "./mcp-tools.ts";
import { toolSettings } from "./settings.ts";
import { SourceListener } from "./source-listener.ts";
import { recordHealth } from "./sources-db.ts";
import { sourceAllowList } from "./url-rule.ts";

/** What a call needs to know of its source: read by the caller from D1 with the source's tools. */
export interface SourceRef {
  id: string;
  orgId: string;
  kind: "mcp" | "http";
  url: string;
  /** Moves on every change of the URL or credential, and on deletion (then calls are refused). */
  version: number;
  credentialHeader: string | null;
  credentialSealed: string | null;
}

/** Whom a call acts for (the identity token's claims but the source's and the tool's). */
export type CallerIdentity = Omit<ToolCallIdentity, "audience" | "sourceId" | "tool">;

export interface SourceCallRequest {
  source: SourceRef;
  tool: { name: string; method: string | null; path: string | null };
  args: Record<string, unknown>;
  identity: CallerIdentity;
  timeoutMs: number;
  maxResponseBytes: number;
}

export type SourceCallOutcome =
  | { ok: true; value: unknown; durationMs: number; wire: WireCount }
  | {
      ok: false;
      code: ToolCallError["code"];
      message: string;
      durationMs: number;
      wire: WireCount;
    };

export type ListOutcome =
  | { ok: true; tools: ListedTool[]; truncated: boolean }
  | { ok: false; code: ToolCallError["code"]; message: string };

/** What the MCP transport's requests of one call (or one listing) are sent with. */
interface RequestScope {
  source: SourceRef;
  identity: CallerIdentity;
  /** The tool called (its identity token names it); null for the source's own requests. */
  tool: string | null;
  /** The call's token, signed once, for its `tools/call` request. */
  token: string | null;
  signal: AbortSignal;
  maxResponseBytes: number;
  wire: WireCount;
  /**
   * The first refusal of the guarded fetch in this scope (a redirect, a URL the rule refuses, a
   * response too large): the MCP client keeps only its message, this keeps its code.
   */
  failure: ToolCallError | null;
  /** Hears the guarded fetch's refusals (besides `failure` keeping the first). */
  onRefusal?: (error: ToolCallError) => void;
}

/**
 * One tool source's client (name = source id): every call of the source goes through here, MCP
 * and HTTP actions alike, so the source has one place that keeps its MCP connection (the agents
 * SDK's `MCPClientManager`, installed on this object's lifecycle as the SDK means it to be), one
 * place that counts its failures in a row (its health, written to D1), and one place that knows
 * it was changed or removed (`retire`: a call made under an older version is refused).
 *
 * Every request carries a fresh identity token signed by Parley (`Authorization: Bearer`), and
 * the source's static credential if it has one. The MCP session is the source's, shared by every
 * person's calls: the server must authorize each request by its token (the MCP specification says
 * servers must not use sessions for authentication), which is what the token is for.
 */
export class ToolSourceClient extends DurableObject<Env> {
  // No `env`: it restores RPC servers, and this object connects only over streamable HTTP.
  readonly mcp = new MCPClientManager("parley", "1.0.0");
  readonly lifecycle = Lifecycle.install(this).use(this.mcp);
  readonly #scope = new AsyncLocalStorage<RequestScope>();
  /** The version the live MCP connection was made under; null: none. */
  #connectedVersion: number | null = null;
  #connecting: Promise<void> | null = null;
  /** The source the live connection was made for (its session's DELETE acts as it). */
  #connectedSource: SourceRef | null = null;
  /** Calls under a version below this are refused (the source changed or went away). */
  #minVersion: number | null = null;
  /** Failed calls in a row as last written to D1; null: not known in this object's life. */
  #failures: number | null = null;
  #lastSuccessWrite = 0;
  /** The source's listener: its own session and stream for `list_changed` (source-listener.ts). */
  readonly listener = new SourceListener({
    env: this.env,
    storage: this.ctx.storage,
    mcp: this.mcp,
    jobs: {
      push: (job) => this.lifecycle.jobs.push(job),
      cancel: (id) => this.lifecycle.jobs.cancel(id),
    },
    headers: (source) => this.#headers(source, { ...sourceIdentity(source), tool: null }),
    minVersion: async () => {
      await this.lifecycle.start();
      this.#minVersion ??= (await this.ctx.storage.get<number>("minVersion")) ?? 0;
      return this.#minVersion;
    },
    waitUntil: (promise) => this.ctx.waitUntil(promise),
  });

  /** The MCP connection's server id in the manager: this object's only one. */
  static readonly SERVER = "source";

  async #ready(source: SourceRef): Promise<void> {
    await this.lifecycle.start();
    if (this.#minVersion === null) {
      this.#minVersion = (await this.ctx.storage.get<number>("minVersion")) ?? 0;
    }
    if (source.version < this.#minVersion) {
      throw new ToolCallError(
        "source_gone",
        "This tool source was changed or removed since the turn began; ask again",
      );
    }
  }

  /**
   * Calls one tool for one person. Never throws: the outcome says how it went (a code the
   * model, the person and the record read), so a failing tool is a tool error, never a 500.
   */
  async call(request: SourceCallRequest): Promise<SourceCallOutcome> {
    const started = Date.now();
    const wire: WireCount = { requestBytes: 0, responseBytes: 0 };
    const timer = new AbortController();
    const timeout = setTimeout(
      () =>
        timer.abort(
          new ToolCallError("timeout", `The tool did not answer within ${request.timeoutMs} ms`),
        ),
      request.timeoutMs,
    );
    try {
      await this.#ready(request.source);
      if (request.source.kind === "mcp") {
        // Off the call's path: keeps the listener up (or starts it from the job).
        this.ctx.waitUntil(this.listener.touch(request.source).catch(() => undefined));
      }
      const value =
        request.source.kind === "mcp"
          ? await this.#callMcp(request, timer.signal, wire)
          : await callHttpAction(request, {
              signal: timer.signal,
              wire,
              headers: await this.#headers(request.source, {
                ...request.identity,
                tool: request.tool.name,
              }),
              allowPrivate: sourceAllowList(this.env),
            });
      this.#succeeded(request.source.id);
      return { ok: true, value, durationMs: Date.now() - started, wire };
    } catch (caught) {
      const error =
        timer.signal.aborted && !isToolCallError(caught)
          ? asToolCallError(timer.signal.reason)
          : asToolCallError(caught);
      if (error.sourceFault) this.#failed(request.source.id, error);
      if (error.code === "timeout" || error.code === "unreachable" || error.code === "malformed") {
        // The connection may be wedged (a half-read stream, a dead session): the next call
        // makes a new one.
        await this.#dropConnection();
      }
      return {
        ok: false,
        code: error.code,
        message: error.message,
        durationMs: Date.now() - started,
        wire,
      };
    } finally {
      clearTimeout(timeout);
    }
  }

  /**
   * Lists an MCP source's tools now (registration, the refresh route, a changed URL) on the
   * listener's fresh session, which then stays open for `list_changed`. Acts as the source,
   * never as the admin who asked. The caller records the outcome (`recordListing`).
   */
  async listTools(input: { source: SourceRef }): Promise<ListOutcome> {
    try {
      await this.#ready(input.source);
    } catch (caught) {
      const error = asToolCallError(caught);
      return { ok: false, code: error.code, message: error.message };
    }
    return this.listener.list(input.source);
  }

  /** The object's Lifecycle jobs: the listener's (`listen`) is the only one. */
  async onJob(context: { job: { fn: string } }) {
    if (context.job.fn === "listen") return this.listener.run();
    return undefined;
  }

  /**
   * The source changed (URL, credential) or was deleted: calls made under an older version are
   * refused from now on, and the connection made under it is closed.
   */
  async retire(minVersion: number): Promise<void> {
    await this.lifecycle.start();
    const current = (await this.ctx.storage.get<number>("minVersion")) ?? 0;
    this.#minVersion = Math.max(current, minVersion);
    await this.ctx.storage.put("minVersion", this.#minVersion);
    await this.#dropConnection();
    // The listener's session ends too (DELETE); a changed source's listing starts it again.
    await this.listener.stop();
  }

  /** An org erased whole: its sources' objects keep nothing. */
  async erase(): Promise<void> {
    await this.lifecycle.start();
    await this.#dropConnection();
    await this.listener.stop();
    await this.ctx.storage.deleteAll();
    // deleteAll keeps the alarm: nothing is left for it to run (the job table went too).
    await this.ctx.storage.deleteAlarm();
    this.#minVersion = Number.MAX_SAFE_INTEGER;
  }

  async #callMcp(
    request: SourceCallRequest,
    timeout: AbortSignal,
    wire: WireCount,
  ): Promise<unknown> {
    // A refusal while the answer is read (too large) ends the call at once: the MCP client would
    // otherwise wait for the rest of a stream that will never come.
    const stop = new AbortController();
    const signal = AbortSignal.any([timeout, stop.signal]);
    const scope: RequestScope = {
      source: request.source,
      identity: request.identity,
      tool: request.tool.name,
      token: await signToolCallToken(config(this.env), {
        ...request.identity,
        audience: request.source.url,
        sourceId: request.source.id,
        tool: request.tool.name,
      }),
      signal,
      maxResponseBytes: request.maxResponseBytes,
      wire,
      failure: null,
      onRefusal: (error) => stop.abort(error),
    };
    return this.#scope.run(scope, async () => {
      try {
        if (this.#connectedVersion !== request.source.version) await this.#connect(request.source);
        return await this.mcp.callTool(
          { serverId: ToolSourceClient.SERVER, name: request.tool.name, arguments: request.args },
          { signal, timeout: request.timeoutMs },
        );
      } catch (caught) {
        if (signal.aborted) throw asToolCallError(signal.reason);
        throw scope.failure ?? mcpError(caught);
      }
    });
  }

  /** Connects (once at a time) through the agents SDK's MCP client, under the current scope. */
  async #connect(source: SourceRef): Promise<void> {
    if (this.#connecting) {
      await this.#connecting.catch(() => undefined);
      if (this.#connectedVersion === source.version) return;
    }
    const connecting = (async () => {
      await this.#dropConnection();
      // Not `registerServer`: nothing is persisted, a woken object connects again when asked.
      await this.mcp
        .connect(source.url, {
          reconnect: { id: ToolSourceClient.SERVER },
          transport: {
            type: "streamable-http",
            fetch: (input: string | URL | Request, init?: RequestInit) => this.#fetch(input, init),
          } as never,
        })
        .catch((error: unknown) => {
          throw connectError(
            error,
            this.mcp.mcpConnections[ToolSourceClient.SERVER]?.connectionState,
          );
        });
      const connection = this.mcp.mcpConnections[ToolSourceClient.SERVER];
      if (connection?.connectionState !== "ready") {
        throw new ToolCallError(
          connection?.connectionState === "authenticating" ? "unauthorized" : "unreachable",
          connection?.connectionState === "authenticating"
            ? "The MCP server refused Parley's identity token"
            : "The MCP server could not be connected",
        );
      }
      this.#connectedVersion = source.version;
      this.#connectedSource = source;
    })();
    this.#connecting = connecting;
    try {
      await connecting;
    } finally {
      if (this.#connecting === connecting) this.#connecting = null;
    }
  }

  async #dropConnection(): Promise<void> {
    this.#connectedVersion = null;
    if (this.mcp.mcpConnections[ToolSourceClient.SERVER]) {
      await this.mcp.closeConnection(ToolSourceClient.SERVER).catch(() => undefined);
    }
    this.#connectedSource = null;
  }

  /**
   * The MCP transport's fetch: the headers of the request's scope (a fresh identity token; the
   * call's own for its `tools/call`), then the guarded fetch (URL rule, no redirects, size cap).
   */
  async #fetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const rpc = rpcMethodOf(init.body);
    if ((init.method ?? "GET").toUpperCase() === "GET" || rpc === "subscriptions/listen") {
      // The calls' connection opens no stream: the source's listener holds its one stream, as
      // the source. (A stream opened here lived in a call's scope and re-listed as its caller.)
      // 2025's GET and 2026-07-28's `subscriptions/listen` (which the v2 client opens after a
      // modern connect for `listChanged`) alike: a 405 is the "no stream" both SDKs expect, and
      // the v2 client's connect goes on without its subscription.
      return new Response(null, { status: 405 });
    }
    const scope = this.#scope.getStore();
    const isCall = rpc === "tools/call" && !!scope?.token;
    const source = scope?.source ?? this.#connectedSource;
    if (!source || (!scope && rpc === "tools/call")) {
      // A call outside any call's scope: nobody to act as, so it is not sent.
      throw new ToolCallError("url_refused", "No call is in progress on this source");
    }
    const url = input instanceof Request ? input.url : input;
    const headers = new Headers(init.headers);
    // The call's own token for its `tools/call`, the person's; the connection's own requests
    // (initialize, the list, the session's end with DELETE) act as the source, no person.
    const own = await this.#headers(
      source,
      isCall && scope
        ? { ...scope.identity, tool: null }
        : { ...sourceIdentity(source), tool: null },
      isCall && scope ? scope.token : null,
    );
    for (const [name, value] of Object.entries(own)) headers.set(name, value);
    const settings = toolSettings(this.env);
    const response = await guardedFetch(
      url,
      { ...init, headers },
      {
        allowPrivate: sourceAllowList(this.env),
        maxResponseBytes: scope?.maxResponseBytes ?? settings.responseMaxBytes,
        // Outside a call (the session's DELETE when the connection is dropped): briefly.
        signal: scope?.signal ?? deadline(Math.min(settings.timeoutMs, 2_000)),
        count: scope?.wire,
        // Only the call's own `tools/call` may make the server act: a call whose connection
        // could not be made (its `initialize` refused, unauthorized, unreadable) never went out.
        acts: isCall,
        onRefusal: (error) => {
          if (!scope) return;
          scope.failure ??= error;
          scope.onRefusal?.(error);
        },
      },
    );
    // A 401 or 403 is the call's error whatever the SDK makes of it (its connect keeps none).
    const refused = refusalOfStatus(response.status);
    if (refused && scope) scope.failure ??= refused;
    return response;
  }

  /** `Authorization: Bearer <identity token>` and the static credential, if any. */
  async #headers(
    source: SourceRef,
    identity: CallerIdentity & { tool: string | null },
    token: string | null = null,
  ): Promise<Record<string, string>> {
    const signed =
      token ??
      (await signToolCallToken(config(this.env), {
        ...identity,
        audience: source.url,
        sourceId: source.id,
      }));
    const headers: Record<string, string> = { authorization: `Bearer ${signed}` };
    if (source.credentialHeader && source.credentialSealed) {
      const value = await openCredential(this.env, source.id, source.credentialSealed);
      if (value !== null) headers[source.credentialHeader.toLowerCase()] = value;
    }
    return headers;
  }

  #succeeded(sourceId: string): void {
    const now = Date.now();
    // One write when the source recovers, and the last success at most once a minute.
    if (this.#failures === 0 && now - this.#lastSuccessWrite < 60_000) return;
    this.#failures = 0;
    this.#lastSuccessWrite = now;
    this.ctx.waitUntil(
      recordHealth(this.env.DB, sourceId, { ok: true, at: now }).catch(() => undefined),
    );
  }

  #failed(sourceId: string, error: ToolCallError): void {
    this.#failures = (this.#failures ?? 0) + 1;
    this.ctx.waitUntil(
      recordHealth(this.env.DB, sourceId, {
        ok: false,
        at: Date.now(),
        error: `${error.code}: ${error.message}`.slice(0, 300),
      }).catch(() => undefined),
    );
  }
}

/** The client object of a source. */
export const sourceClient = (env: Env, sourceId: string) =>
  env.TOOL_SOURCE.get(env.TOOL_SOURCE.idFromName(sourceId));

/**
 * The identity of a source's own requests (its listing, its stream, its sessions' start and end):
 * `sub` the source id, `kind: "source"`, no app, session or tool. Never a person's.
 */
export const sourceIdentity = (source: SourceRef): CallerIdentity => ({
  subject: source.id,
  subjectKind: "source",
  orgId: source.orgId,
  appId: null,
  sessionId: null,
});

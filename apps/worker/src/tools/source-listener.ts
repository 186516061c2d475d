import type { MCPClientManager } from "agents/mcp/client";
import { asToolCallError, ToolCallError } from "./call-error.ts";
import { deadline, guardedFetch } from "./guarded-fetch.ts";
import {
  connectError,
  mcpError,
  refusalOfStatus,
  rpcMethodOf,
  toListedTools,
} from "./mcp-tools.ts";
import { toolSettings } from "./settings.ts";
import type { ListOutcome, SourceRef } from "./source-client.ts";
import { recordListing, sourceById, sourceRef } from "./sources-db.ts";
import { sourceAllowList } from "./url-rule.ts";

/**
 * An MCP source's listener (docs/2026-12-06-tool-list-listener.md), owned by the source's
 * `ToolSourceClient`: one MCP session of its own (the agents SDK's client, connection id
 * `listener`), whose standalone GET stream (the streamable HTTP transport's server-to-client
 * stream, opened by the SDK after `initialize`) carries `notifications/tools/list_changed`. The
 * SDK lists the tools again (its debounce: a burst is one re-list) and the list is recorded as
 * every listing is (`recordListing`). Every request of it acts as the source, never as a person.
 *
 * Driven by one Lifecycle job (`listen`, the object's alarm): a dropped stream is reopened on a
 * fresh session after a backoff (1 s doubling to 5 min; a stream that lived a minute starts over),
 * a server without the GET stream (405) is re-listed every `TOOL_LISTEN_POLL_MS` instead, a
 * watchdog reopens a stream an eviction took, and the whole thing ends (the session closed with
 * DELETE) after `TOOL_LISTEN_IDLE_MS` without a call or listing, or when the source is gone,
 * changed or its org erased. Every reopen lists (notifications may have been missed meanwhile).
 */

const LISTENER = "listener";
const JOB = "listen";
const STATE = "listen";
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 300_000;
/** How often a listening object checks that its stream is still there (an eviction ends it). */
const WATCHDOG_MS = 600_000;
/** A stream that ends sooner than this after opening does not start the backoff over. */
const SHORT_LIVED_MS = 60_000;
/** Activity is written at most this often (a busy source's calls write nothing). */
const ACTIVITY_WRITE_MS = 60_000;

/** What the listener keeps in its object's storage (so an alarm after an eviction knows). */
interface ListenState {
  sourceId: string;
  /** `stream`: the GET stream is (or should be) open; `poll`: the server has none; `down`: retrying. */
  mode: "stream" | "poll" | "down";
  /** Failed or short-lived opens in a row (the backoff's exponent). */
  attempt: number;
  /** The last call or listing of the source. */
  lastActive: number;
}

type StreamOutcome = "open" | "none" | "failed";

/** What the listener needs of its object. */
export interface ListenerHost {
  env: Env;
  storage: DurableObjectStorage;
  mcp: MCPClientManager;
  jobs: {
    push(job: {
      id: string;
      fn: string;
      time: number;
      singleflight: boolean;
      hungTimeoutSeconds: number;
    }): Promise<unknown>;
    cancel(id: string): Promise<boolean>;
  };
  /** The source's own headers: its identity token (`kind: "source"`) and credential. */
  headers(source: SourceRef): Promise<Record<string, string>>;
  /** Sources below this version were changed or removed. */
  minVersion(): Promise<number>;
  waitUntil(promise: Promise<unknown>): void;
}

export const backoff = (attempt: number) =>
  Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempt, 20), BACKOFF_CAP_MS);

export class SourceListener {
  /** The open listener session: what it was made for and whether its stream is up. */
  #live: { source: SourceRef; openedAt: number; stream: StreamOutcome } | null = null;
  /** Moves at every open and close: callbacks of an older session are ignored. */
  #gen = 0;
  #state: ListenState | null | undefined;
  #lastActivityWrite = 0;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly host: ListenerHost) {}

  /** One open or close at a time (a listing, the job, a drop, a stop). */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #read(): Promise<ListenState | null> {
    if (this.#state === undefined) {
      this.#state = (await this.host.storage.get<ListenState>(STATE)) ?? null;
    }
    return this.#state;
  }

  async #write(state: ListenState | null): Promise<void> {
    this.#state = state;
    if (state) await this.host.storage.put(STATE, state);
    else await this.host.storage.delete(STATE);
  }

  #schedule(time: number): Promise<unknown> {
    return this.host.jobs.push({
      id: JOB,
      fn: JOB,
      time,
      singleflight: true,
      hungTimeoutSeconds: 90,
    });
  }

  /**
   * Lists the source's tools now on a fresh listener session (registration, the refresh route,
   * a changed URL) and keeps listening. The caller records the outcome (`recordListing`).
   */
  list(source: SourceRef): Promise<ListOutcome> {
    return this.#exclusive(async () => {
      const outcome = await this.#open(source);
      const state: ListenState = {
        sourceId: source.id,
        mode: "down",
        attempt: 0,
        lastActive: Date.now(),
      };
      this.#lastActivityWrite = state.lastActive;
      await this.#schedule(await this.#after(outcome, state));
      return outcome;
    });
  }

  /**
   * A call of the source: the listener stays up for another idle period, and starts (from the
   * job, off the call's path) when it was not listening.
   */
  async touch(source: SourceRef): Promise<void> {
    const now = Date.now();
    const state = await this.#read();
    if (state && state.sourceId === source.id) {
      const lost = state.mode === "stream" && this.#live === null;
      if (!lost && now - this.#lastActivityWrite < ACTIVITY_WRITE_MS) return;
      this.#lastActivityWrite = now;
      await this.#write({ ...state, lastActive: now });
      if (lost) await this.#schedule(now);
      return;
    }
    this.#lastActivityWrite = now;
    await this.#write({ sourceId: source.id, mode: "down", attempt: 0, lastActive: now });
    await this.#schedule(now);
  }

  /** The job: reopen, re-list, check the stream, or end (idle, source gone or changed). */
  run(): Promise<{ rescheduleAt: number } | undefined> {
    return this.#exclusive(async () => {
      const state = await this.#read();
      if (!state) {
        await this.#close();
        return undefined;
      }
      const env = this.host.env;
      const row = await sourceById(env.DB, state.sourceId);
      const idleMs = toolSettings(env).listenIdleMs;
      const gone =
        row?.kind !== "mcp" || row.enabled !== 1 || row.version < (await this.host.minVersion());
      if (gone || (idleMs > 0 && Date.now() - state.lastActive >= idleMs)) {
        await this.#end();
        return undefined;
      }
      if (state.mode === "poll" && toolSettings(env).listenPollMs === 0) {
        // No polling: such a source is listed on demand only; the job just ends it when idle.
        return idleMs > 0 ? { rescheduleAt: state.lastActive + idleMs } : undefined;
      }
      const source = sourceRef(row);
      const live = this.#live;
      if (
        state.mode === "stream" &&
        live?.stream === "open" &&
        live.source.url === source.url &&
        live.source.version === source.version
      ) {
        return { rescheduleAt: this.#watch(state) };
      }
      const outcome = await this.#open(source);
      if (outcome.ok) await recordListing(env.DB, source.id, outcome);
      return { rescheduleAt: await this.#after(outcome, state) };
    });
  }

  /** Stops listening: the session ended (DELETE), nothing left to wake the object. */
  stop(): Promise<void> {
    return this.#exclusive(() => this.#end());
  }

  async #end(): Promise<void> {
    await this.#close();
    await this.#write(null);
    await this.host.jobs.cancel(JOB).catch(() => false);
  }

  /** The next state after an open, written; returns when the job runs next. */
  async #after(outcome: ListOutcome, state: ListenState): Promise<number> {
    const now = Date.now();
    const stream = this.#live?.stream ?? "failed";
    if (outcome.ok && stream === "open") {
      const next: ListenState = { ...state, mode: "stream" };
      await this.#write(next);
      return this.#watch(next);
    }
    if (outcome.ok && stream === "none") {
      // Nothing to hold: the session ends now, the job lists again on a fresh one.
      await this.#close();
      const next: ListenState = { ...state, mode: "poll", attempt: 0 };
      await this.#write(next);
      const { listenPollMs, listenIdleMs } = toolSettings(this.host.env);
      const idleEnd = listenIdleMs > 0 ? next.lastActive + listenIdleMs : Number.POSITIVE_INFINITY;
      return listenPollMs > 0
        ? Math.min(now + listenPollMs, idleEnd)
        : Math.min(idleEnd, now + WATCHDOG_MS);
    }
    await this.#close();
    const next: ListenState = { ...state, mode: "down", attempt: state.attempt + 1 };
    await this.#write(next);
    return now + backoff(state.attempt);
  }

  /** A listening object's next check: the watchdog, or the end of its idle period if sooner. */
  #watch(state: ListenState): number {
    const idleMs = toolSettings(this.host.env).listenIdleMs;
    const watchdog = Date.now() + WATCHDOG_MS;
    return idleMs > 0 ? Math.min(watchdog, state.lastActive + idleMs) : watchdog;
  }

  /**
   * Opens a fresh listener session on `source` (the previous one ended first) and lists its
   * tools; waits for the GET stream's answer (open, 405, or failed) before returning.
   */
  async #open(source: SourceRef): Promise<ListOutcome> {
    await this.#close();
    const gen = ++this.#gen;
    const env = this.host.env;
    const settings = toolSettings(env);
    let failure: ToolCallError | null = null;
    let streamAnswered: (outcome: StreamOutcome) => void = () => undefined;
    const streamAnswer = new Promise<StreamOutcome>((resolve) => {
      streamAnswered = resolve;
    });
    const live = { source, openedAt: Date.now(), stream: "failed" as StreamOutcome };
    const fetcher = async (input: string | URL | Request, init: RequestInit = {}) => {
      const url = input instanceof Request ? input.url : input;
      const method = (init.method ?? "GET").toUpperCase();
      // The change channel: 2025's standalone GET stream, or 2026-07-28's `subscriptions/listen`
      // (a POST whose answer is the stream; the v2 client opens it after a modern connect).
      const stream =
        method === "GET" ||
        (method === "POST" && rpcMethodOf(init.body) === "subscriptions/listen");
      const headers = new Headers(init.headers);
      for (const [name, value] of Object.entries(await this.host.headers(source))) {
        headers.set(name, value);
      }
      // A stream lives until closed (the transport's own signal ends it), but its answer must
      // come within the call timeout; every other request has the call timeout whole.
      const opening = new AbortController();
      const openTimer = stream
        ? setTimeout(
            () =>
              opening.abort(
                new ToolCallError("timeout", "The tool's server did not open its stream in time"),
              ),
            settings.timeoutMs,
          )
        : undefined;
      try {
        const response = await guardedFetch(
          url,
          { ...init, headers },
          {
            allowPrivate: sourceAllowList(env),
            // The stream's whole life is bounded (what the SDK's event parser may buffer
            // included): past it the stream errors, and the job reopens a fresh one.
            maxResponseBytes: stream ? settings.listenStreamMaxBytes : settings.responseMaxBytes,
            signal: stream ? opening.signal : deadline(settings.timeoutMs),
            onRefusal: (error) => {
              if (!stream) failure ??= error;
            },
          },
        );
        if (!stream) failure ??= refusalOfStatus(response.status);
        if (method === "GET") {
          streamAnswered(response.ok ? "open" : response.status === 405 ? "none" : "failed");
        }
        return response;
      } catch (error) {
        if (method === "GET") streamAnswered("failed");
        throw error;
      } finally {
        clearTimeout(openTimer);
      }
    };
    try {
      await this.host.mcp.connect(source.url, {
        reconnect: { id: LISTENER },
        client: {
          listChanged: {
            tools: {
              debounceMs: settings.listDebounceMs,
              onChanged: (error: Error | null, tools: unknown[] | null) =>
                this.#changed(gen, source, error, tools),
            },
          },
        } as never,
        transport: {
          type: "streamable-http",
          fetch: fetcher,
          // The SDK's own reconnection is handed to the job: when the stream ends the SDK asks
          // the scheduler, which marks the stream dropped and lets the alarm reopen it.
          reconnectionOptions: {
            initialReconnectionDelay: BACKOFF_BASE_MS,
            maxReconnectionDelay: BACKOFF_CAP_MS,
            reconnectionDelayGrowFactor: 2,
            maxRetries: 1,
          },
          reconnectionScheduler: () => {
            this.host.waitUntil(this.#dropped(gen));
            return () => undefined;
          },
        } as never,
      });
      const connection = this.host.mcp.mcpConnections[LISTENER];
      if (connection?.connectionState !== "ready") {
        throw mcpError(connection?.connectionError ?? new Error("not connected"));
      }
      const listed = toListedTools(connection.tools);
      const client = connection.client;
      if (client.getProtocolEra() === "modern") {
        // 2026-07-28 (the v2 SDK's `createMcpHandler`): no session and no GET; the v2 client
        // opened `subscriptions/listen` for `listChanged` during connect (the server acknowledged
        // it) unless the server offers no `tools.listChanged`: then there is nothing to hold.
        const subscription = client.autoOpenedSubscription;
        live.stream = subscription ? "open" : "none";
        void subscription?.closed.then((cause) => {
          if (cause !== "local") this.host.waitUntil(this.#dropped(gen));
        });
      } else if (!connection.sessionId) {
        // A 2025 server without sessions (the SDK's stateless mode: a server per request) has
        // nothing that could write to a stream of ours, though the v2 SDK's transport answers
        // the GET with one that stays open and silent: not held, polled like a 405.
        live.stream = "none";
      } else {
        // The SDK opens the GET right after `initialize`: its answer has usually come by now.
        let timer: ReturnType<typeof setTimeout> | undefined;
        live.stream = await Promise.race([
          streamAnswer,
          new Promise<StreamOutcome>((resolve) => {
            timer = setTimeout(() => resolve("failed"), settings.timeoutMs);
          }),
        ]);
        clearTimeout(timer);
      }
      if (gen === this.#gen) this.#live = live;
      return { ok: true, ...listed };
    } catch (caught) {
      const error =
        failure ??
        asToolCallError(
          connectError(caught, this.host.mcp.mcpConnections[LISTENER]?.connectionState),
        );
      await this.#close();
      return { ok: false, code: error.code, message: error.message };
    }
  }

  /** Ends the listener session: DELETE to the server, then the stream is aborted. */
  async #close(): Promise<void> {
    this.#gen++;
    this.#live = null;
    if (this.host.mcp.mcpConnections[LISTENER]) {
      await this.host.mcp.closeConnection(LISTENER).catch(() => undefined);
    }
  }

  /** The server's list changed and the SDK listed it again (once per burst). */
  #changed(gen: number, source: SourceRef, error: Error | null, tools: unknown[] | null): void {
    if (gen !== this.#gen) return;
    const outcome: Parameters<typeof recordListing>[2] = error
      ? { ok: false, code: mcpError(error).code, message: mcpError(error).message }
      : { ok: true, ...toListedTools((tools ?? []) as Parameters<typeof toListedTools>[0]) };
    this.host.waitUntil(recordListing(this.host.env.DB, source.id, outcome).catch(() => undefined));
  }

  /** The stream ended (the server closed it, a cap, the network): the job reopens it. */
  #dropped(gen: number): Promise<void> {
    return this.#exclusive(async () => {
      // Once per stream (the SDK's reconnection and a subscription's end may both report it).
      if (gen !== this.#gen || !this.#live || this.#live.stream === "failed") return;
      const lived = Date.now() - this.#live.openedAt;
      this.#live.stream = "failed";
      const state = await this.#read();
      if (!state) return;
      const attempt = lived < SHORT_LIVED_MS ? state.attempt : 0;
      await this.#write({ ...state, mode: "down", attempt: attempt + 1 });
      await this.#schedule(Date.now() + backoff(attempt));
    }).catch(() => undefined);
  }
}

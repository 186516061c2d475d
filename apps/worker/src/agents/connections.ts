import { AppError, isAppError } from "@parley/shared";
import type { Connection } from "agents";
import { liveEndUserRead } from "../auth/end-users.ts";
import { liveUserRead } from "../auth/middleware.ts";
import { type BatchedRead, batchAnswers } from "../db/batched-read.ts";
import type { AgentCaller } from "./caller.ts";

/** Close code for a socket whose object was erased (4000-4999 are the application's). */
export const CLOSE_ERASED = 4410;
/** Close code for a socket whose caller lost access (removed from the org, account erased). */
export const CLOSE_FORBIDDEN = 4403;
/**
 * Close code for a socket whose token is no longer good (expired, signed out, rights changed): the
 * client gets a fresh token and a new connect ticket, and reconnects. 1013 ("try again later"), not
 * a 4xxx code: the agents SDK's client treats every 4000-4999 close as final and never reconnects,
 * which is right for 4403 and 4410 but would leave a chat dead at each token expiry.
 */
export const CLOSE_REAUTHENTICATE = 1013;

/** The close code that goes with a refusal of the caller's access. */
export function closeCodeFor(code: string): number {
  if (code === "unauthorized") return CLOSE_REAUTHENTICATE;
  if (code === "gone") return CLOSE_ERASED;
  return CLOSE_FORBIDDEN;
}

/**
 * Which sockets a revocation is about: one user's (in one org, or all), one sign-in session's, or
 * every socket of a project's chats (its memory or name changed, or it is being erased: `except`
 * names a session that already knows) or of one session (being erased).
 */
export type ConnectionFilter =
  | { userId: string; orgId?: string }
  | { familyId: string }
  | { projectId: string; except?: string }
  | { sessionId: string };

/** Whether a revocation names the socket of `caller`. */
function names(filter: ConnectionFilter, caller: AgentCaller): boolean {
  if ("familyId" in filter) return caller.familyId === filter.familyId;
  if ("userId" in filter) {
    return (
      caller.userId === filter.userId &&
      (filter.orgId === undefined || caller.orgId === filter.orgId)
    );
  }
  return true; // a project's or a session's: every socket of the object it was sent to
}

/** What the registry needs from the chat agent it serves. */
export interface RegistryHost {
  readonly env: Cloudflare.Env;
  /** The agent's URL segment and the object's name, as the registry rows name them. */
  readonly agentName: "onboarding-agent" | "assistant-agent";
  readonly name: string;
  connections(): Iterable<Connection>;
  callerOf(connection: Connection): AgentCaller | null;
  /**
   * The D1 check that the caller may still use the object (its `read` throws an `AppError` when
   * not), as a read the registry sends in one batch with the token's liveness.
   */
  accessCheck(caller: AgentCaller): BatchedRead<unknown>;
  /** The caller lost access: their turns in flight stop. */
  abortTurnsOf(userId: string): void;
  /** A push came: whatever the agent kept of anyone's access is stale. */
  forgetAccess(): void;
}

/**
 * The connection registry (D1 `agent_connections`): every open socket of a chat agent, so that a
 * removal, a role change, a logout, a project edited or an erasure filed finds the objects
 * holding affected sockets and has them re-checked at once (`revocation.ts` pushes,
 * `recheckAll` answers).
 */
export class ConnectionRegistry {
  readonly #host: RegistryHost;

  constructor(host: RegistryHost) {
    this.#host = host;
  }

  /**
   * Enters the socket in the registry, then checks the caller's access again. The order matters: a
   * revocation deletes the right first and reads the registry second, this writes the registry
   * first and reads the right second, so whichever comes last sees the other, and no socket
   * authorized just before a removal outlives it. Row and checks go in one `DB.batch` (one round
   * trip, one transaction, the write first). A socket whose batch fails is closed (the client
   * reconnects): it may not be registered, and an unregistered socket could not be revoked.
   */
  async register(connection: Connection, caller: AgentCaller): Promise<void> {
    const { env, agentName, name } = this.#host;
    const row = env.DB.prepare(
      `INSERT INTO agent_connections (agent, name, connection_id, user_id, org_id, family_id, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ).bind(
      agentName,
      name,
      connection.id,
      caller.userId,
      caller.orgId,
      caller.familyId,
      caller.expiresAt,
    );
    // The row, then the token's liveness and the caller's access, in one batch: one round trip
    // to D1 and one transaction, the write ordered before the reads.
    const live = this.#liveness(caller);
    const access = this.#host.accessCheck(caller);
    let answers: D1Result[][];
    try {
      answers = await batchAnswers(env.DB, [live, access], [row]);
    } catch {
      connection.close(1011, "try again");
      return;
    }
    await this.#judge(connection, caller, live, access, answers);
  }

  /** Closes the socket if its token or its caller's access is no longer good; true if it stays. */
  async recheck(connection: Connection, caller: AgentCaller): Promise<boolean> {
    const live = this.#liveness(caller);
    const access = this.#host.accessCheck(caller);
    let answers: D1Result[][];
    try {
      answers = await batchAnswers(this.#host.env.DB, [live, access]);
    } catch {
      return true; // D1 unreachable: the per-turn checks still stand guard
    }
    return this.#judge(connection, caller, live, access, answers);
  }

  /** The token's liveness check for `caller`: a member's sign-in, or an end user and their app. */
  #liveness(caller: AgentCaller): BatchedRead<void> {
    const db = this.#host.env.DB;
    if (caller.kind === "end_user" && caller.appId !== null) {
      const read = liveEndUserRead(db, {
        endUserId: caller.userId,
        appId: caller.appId,
        orgId: caller.orgId,
      });
      return {
        statements: read.statements,
        // An end user gone, or their app deleted, is access lost for good (4403), not a token to
        // renew: a new token would be refused as well.
        read: (answers) => {
          try {
            read.read(answers);
          } catch (error) {
            throw isAppError(error) ? new AppError("forbidden", "This app's access ended") : error;
          }
        },
      };
    }
    return liveUserRead(db, {
      userId: caller.userId,
      familyId: caller.familyId,
      version: caller.tokenVersion,
    });
  }

  /** What the answers of `recheck`'s reads say for the socket; true if it stays. */
  async #judge(
    connection: Connection,
    caller: AgentCaller,
    live: BatchedRead<void>,
    access: BatchedRead<unknown>,
    [liveAnswers, accessAnswers]: D1Result[][],
  ): Promise<boolean> {
    try {
      await live.read(liveAnswers ?? []);
    } catch (error) {
      if (!isAppError(error)) return true; // D1 unreachable: the per-turn checks still stand guard
      connection.close(closeCodeFor(error.code), error.code);
      return false;
    }
    try {
      await access.read(accessAnswers ?? []);
      return true;
    } catch (error) {
      if (!isAppError(error)) return true;
      connection.close(closeCodeFor(error.code), error.code);
      // Their access is gone, not just their token: a reply of theirs still being written stops
      // here (and is settled to what the provider charged), rather than running on at the org's
      // cost for someone no longer in it.
      this.#host.abortTurnsOf(caller.userId);
      return false;
    }
  }

  /**
   * Re-checks the sockets a revocation names and closes those no longer allowed, without waiting
   * for their client to speak. Returns how many were closed.
   */
  async recheckAll(filter: ConnectionFilter): Promise<{ closed: number }> {
    // What the agent kept of the caller's access is stale now: the next turn reads it again.
    this.#host.forgetAccess();
    let closed = 0;
    for (const connection of this.#host.connections()) {
      const caller = this.#host.callerOf(connection);
      if (caller && names(filter, caller) && !(await this.recheck(connection, caller))) closed++;
    }
    return { closed };
  }

  /** Scheduled at each socket's token expiry: closes the sockets whose token has expired. */
  closeExpired(now = Date.now()): void {
    for (const connection of this.#host.connections()) {
      const caller = this.#host.callerOf(connection);
      if (caller && caller.expiresAt <= now) {
        connection.close(CLOSE_REAUTHENTICATE, "token expired");
      }
    }
  }

  /** The socket closed: its row goes (best effort: a stale row costs one re-check). */
  forget(connectionId: string): Promise<void> {
    const { env, agentName, name } = this.#host;
    return env.DB.prepare(
      "DELETE FROM agent_connections WHERE agent = ? AND name = ? AND connection_id = ?",
    )
      .bind(agentName, name, connectionId)
      .run()
      .then(
        () => undefined,
        () => undefined,
      );
  }

  /** Erasure: the registry stops naming this object, so nothing addresses it again. */
  async forgetObject(): Promise<void> {
    const { env, agentName, name } = this.#host;
    await env.DB.prepare("DELETE FROM agent_connections WHERE agent = ? AND name = ?")
      .bind(agentName, name)
      .run();
  }
}

/** The caller a connection was opened by, or a refusal when it cannot start a turn now. */
export function callerForTurn(caller: AgentCaller | null): AgentCaller {
  if (!caller) throw new AppError("forbidden", "This connection has no caller");
  if (caller.expiresAt <= Date.now()) {
    throw new AppError("unauthorized", "Your sign-in expired: reconnect to continue");
  }
  return caller;
}

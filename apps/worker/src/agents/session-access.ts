import type { EndUserLimits } from "@parley/billing";
import { AppError } from "@parley/shared";
import { type ProjectRow, sessionAccessRead } from "../auth/access.ts";
import { endUserSessionAccessRead } from "../auth/end-user-access.ts";
import { type BatchedRead, runRead } from "../db/batched-read.ts";
import type { AgentCaller } from "./caller.ts";
import type { KeptRows } from "./kept-rows.ts";

/** The key of the kept access in `parley_kept`. */
const KEY = "access";

/** The access last read from D1 (kept across hibernation when the agent gives `kept`). */
interface KeptAccess {
  userId: string;
  project: ProjectRow;
  at: number;
  /** An end user's app's limits, as read with their access (pushes re-read them). */
  endUserLimits?: EndUserLimits;
  /** Whether the end user's app shows them what replies cost (its `showCost`). */
  showCost?: boolean;
}

/**
 * An assistant session's caller's right to it, and its project as the model will see it, read from
 * D1 and kept: at connect, and again after a push or once `authzCacheMs` has passed. A push (a
 * member removed, a role changed, a sign-out, the project's memory or name edited, an erasure
 * filed) calls `forget` and re-checks the object's sockets; `authzCacheMs` bounds a push that never
 * arrived. No D1 read on a steady turn, nor on the first turn after a hibernation: the agent keeps
 * it in its own SQLite (`kept`, kept-rows.ts), and a push deletes it there too.
 */
export class SessionAccess {
  readonly #db: D1Database;
  /** Read when used: the object's name is not set yet while the agent is constructed. */
  readonly #sessionId: () => string;
  readonly #cacheMs: number;
  /** Where the access is kept across hibernation (kept-rows.ts); without it, in memory only. */
  readonly #rows: KeptRows | null;
  /** undefined: not looked up since the object started (only this class writes the row). */
  #kept: KeptAccess | null | undefined;

  constructor(input: {
    db: D1Database;
    sessionId: () => string;
    cacheMs: number;
    kept?: KeptRows;
  }) {
    this.#db = input.db;
    this.#sessionId = input.sessionId;
    this.#cacheMs = input.cacheMs;
    this.#rows = input.kept ?? null;
  }

  /** What was kept: in memory, or else as stored before the object last hibernated. */
  get #current(): KeptAccess | null {
    if (this.#kept === undefined) {
      this.#kept = this.#rows?.get<KeptAccess>(KEY)?.value ?? null;
    }
    return this.#kept;
  }

  #keep(kept: KeptAccess | null): void {
    this.#kept = kept;
    if (kept === null) this.#rows?.delete(KEY);
    else this.#rows?.put(KEY, kept.at, kept);
  }

  /** Reads the caller's access from D1 and keeps it; throws an `AppError` when they have none. */
  read(caller: AgentCaller): Promise<ProjectRow> {
    return runRead(this.#db, this.reading(caller));
  }

  /**
   * `read` as a read that can share a `DB.batch` with others (the connect's checks, one round
   * trip: connections.ts). What was kept is dropped now, and kept again once the answer says yes.
   */
  reading(caller: AgentCaller): BatchedRead<ProjectRow> {
    this.#keep(null);
    const sessionId = this.#sessionId();
    if (caller.kind === "end_user" && caller.appId !== null) {
      // An end user's own session of their app, in a project the app lists (auth/end-user-access.ts).
      const read = endUserSessionAccessRead(
        this.#db,
        { endUserId: caller.userId, appId: caller.appId, orgId: caller.orgId },
        sessionId,
      );
      return {
        statements: read.statements,
        read: async (answers) => {
          const { project, limits, showCost } = await read.read(answers);
          this.#keep({
            userId: caller.userId,
            project,
            at: Date.now(),
            endUserLimits: limits,
            showCost,
          });
          return project;
        },
      };
    }
    const read = sessionAccessRead(this.#db, caller.userId, sessionId);
    return {
      statements: read.statements,
      read: async (answers) => {
        const { session, project } = await read.read(answers);
        if (session.owner_id !== caller.userId)
          throw new AppError("not_found", "Session not found");
        this.#keep({ userId: caller.userId, project, at: Date.now() });
        return project;
      },
    };
  }

  /** The kept access while fresh and the caller's, else read again. */
  async for(caller: AgentCaller): Promise<ProjectRow> {
    const kept = this.#current;
    if (kept && Date.now() - kept.at < this.#cacheMs && kept.userId === caller.userId) {
      return kept.project;
    }
    return this.read(caller);
  }

  forget(): void {
    this.#keep(null);
  }

  /** Whether the last read was an end user's (their prompt offers no tools). */
  get endUser(): boolean {
    return this.#current?.endUserLimits !== undefined;
  }

  /** Whether replies show their cost (an end user's app may hide it). */
  get showCost(): boolean {
    return this.#current?.showCost !== false;
  }

  /**
   * The end user's limits as last read with their access. Admission reads the access before any
   * call is reserved; were it ever missing, the call is held under a zero limit (refused) rather
   * than without one.
   */
  endUserLimits(caller: AgentCaller): EndUserLimits {
    const kept = this.#current;
    if (kept?.userId === caller.userId && kept.endUserLimits) return kept.endUserLimits;
    return { dailyMicros: 0, weeklyMicros: 0, monthlyMicros: 0 };
  }
}

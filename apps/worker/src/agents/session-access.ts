import type { EndUserLimits } from "@parley/billing";
import { AppError } from "@parley/shared";
import { type ProjectRow, sessionAccess } from "../auth/access.ts";
import { endUserSessionAccess } from "../auth/end-user-access.ts";
import type { AgentCaller } from "./caller.ts";

/** The access last read from D1 (in memory only: a reset reads it again). */
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
 * arrived. No D1 read on a steady turn.
 */
export class SessionAccess {
  readonly #db: D1Database;
  /** Read when used: the object's name is not set yet while the agent is constructed. */
  readonly #sessionId: () => string;
  readonly #cacheMs: number;
  #kept: KeptAccess | null = null;

  constructor(input: { db: D1Database; sessionId: () => string; cacheMs: number }) {
    this.#db = input.db;
    this.#sessionId = input.sessionId;
    this.#cacheMs = input.cacheMs;
  }

  /** Reads the caller's access from D1 and keeps it; throws an `AppError` when they have none. */
  async read(caller: AgentCaller): Promise<ProjectRow> {
    this.#kept = null;
    if (caller.kind === "end_user" && caller.appId !== null) {
      // An end user's own session of their app, in a project the app lists (auth/end-user-access.ts).
      const { project, limits, showCost } = await endUserSessionAccess(
        this.#db,
        { endUserId: caller.userId, appId: caller.appId, orgId: caller.orgId },
        this.#sessionId(),
      );
      this.#kept = {
        userId: caller.userId,
        project,
        at: Date.now(),
        endUserLimits: limits,
        showCost,
      };
      return project;
    }
    const { session, project } = await sessionAccess(this.#db, caller.userId, this.#sessionId());
    if (session.owner_id !== caller.userId) throw new AppError("not_found", "Session not found");
    this.#kept = { userId: caller.userId, project, at: Date.now() };
    return project;
  }

  /** The kept access while fresh and the caller's, else read again. */
  async for(caller: AgentCaller): Promise<ProjectRow> {
    const kept = this.#kept;
    if (kept && Date.now() - kept.at < this.#cacheMs && kept.userId === caller.userId) {
      return kept.project;
    }
    return this.read(caller);
  }

  forget(): void {
    this.#kept = null;
  }

  /** Whether the last read was an end user's (their prompt offers no tools). */
  get endUser(): boolean {
    return this.#kept?.endUserLimits !== undefined;
  }

  /** Whether replies show their cost (an end user's app may hide it). */
  get showCost(): boolean {
    return this.#kept?.showCost !== false;
  }

  /**
   * The end user's limits as last read with their access. Admission reads the access before any
   * call is reserved; were it ever missing, the call is held under a zero limit (refused) rather
   * than without one.
   */
  endUserLimits(caller: AgentCaller): EndUserLimits {
    const kept = this.#kept;
    if (kept?.userId === caller.userId && kept.endUserLimits) return kept.endUserLimits;
    return { dailyMicros: 0, weeklyMicros: 0, monthlyMicros: 0 };
  }
}

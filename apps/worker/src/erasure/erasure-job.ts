import { DurableObject } from "cloudflare:workers";
import type { ErasurePlan, ErasureRequestRow, Step } from "./plan.ts";
import { runStep } from "./steps.ts";
import { verifyErasure } from "./verify.ts";

const MAX_ATTEMPTS = 6;
/** When the alarm takes over if the run the Worker started does not finish (a crash, an eviction). */
const SAFETY_NET_MS = 30_000;

/**
 * Drives one erasure request (name = request id) to completion from its alarm, step by step, with
 * the request's state in D1: after a crash the alarm fires again and the job resumes at the first
 * step not done. Steps are idempotent, so a step interrupted half-way simply runs again.
 */
export class ErasureJob extends DurableObject<Env> {
  /** Starts (or nudges) the job; safe to call again. */
  async start(requestId: string): Promise<void> {
    await this.ctx.storage.put("requestId", requestId);
    await this.ctx.storage.setAlarm(Date.now() + SAFETY_NET_MS);
  }

  override async alarm(): Promise<void> {
    const requestId = await this.ctx.storage.get<string>("requestId");
    if (requestId) await this.run(requestId);
  }

  #current: Promise<ErasureRequestRow["status"]> | null = null;

  /**
   * Runs every step not done yet. The Worker calls it right after filing; the alarm calls it after a
   * crash. One run at a time: a second caller waits for the run in progress.
   */
  run(requestId: string): Promise<ErasureRequestRow["status"]> {
    if (!this.#current) {
      this.#current = this.#run(requestId).finally(() => {
        this.#current = null;
      });
    }
    return this.#current;
  }

  async #run(requestId: string): Promise<ErasureRequestRow["status"]> {
    const db = this.env.DB;
    const request = await db
      .prepare("SELECT * FROM erasure_requests WHERE id = ?")
      .bind(requestId)
      .first<ErasureRequestRow>();
    if (!request || request.status === "completed" || request.status === "failed")
      return request?.status ?? "failed";
    const plan = JSON.parse(request.plan ?? "null") as ErasurePlan | null;
    if (!plan) return "failed";
    const steps = JSON.parse(request.steps) as Step[];
    const save = (status: ErasureRequestRow["status"], extra: Record<string, unknown> = {}) =>
      db
        .prepare(
          `UPDATE erasure_requests SET status = ?, steps = ?, updated_at = ?, attempts = ?,
             verification = COALESCE(?, verification), completed_at = ?, subject_id = ?, plan = ? WHERE id = ?`,
        )
        .bind(
          status,
          JSON.stringify(steps),
          Date.now(),
          (extra.attempts as number | undefined) ?? request.attempts,
          (extra.verification as string | undefined) ?? null,
          status === "completed" ? Date.now() : null,
          // The raw ids are dropped once the job is done: the trail keeps only the hash.
          status === "completed" ? null : request.subject_id,
          status === "completed" ? null : request.plan,
          requestId,
        )
        .run();

    await save("running");
    for (const step of steps) {
      if (step.status === "done" || step.status === "skipped") continue;
      // A step can keep the isolate busy for a while (other objects of this Worker share it): the
      // job lets what queued behind it run between steps, such as the sockets its filing just
      // closed finishing their close (issue 28.7: an end user's socket closed 1.3 s after their
      // erasure was filed, when the whole job had run, instead of 0.15 s).
      await new Promise((resolve) => setTimeout(resolve, 0));
      try {
        if (step.name === "verify") {
          const verification = await verifyErasure(this.env, plan, request.org_id);
          step.status = verification.ok ? "done" : "failed";
          step.detail = verification.ok
            ? "nothing left in any store"
            : verification.findings.join("; ");
          step.at = new Date().toISOString();
          if (!verification.ok) throw new Error(step.detail);
          await save("running", { verification: JSON.stringify(verification) });
          continue;
        }
        step.detail = await runStep(this.env, request, plan, step.name);
        step.status = "done";
        step.at = new Date().toISOString();
        await save("running");
      } catch (error) {
        const attempts = request.attempts + 1;
        step.detail =
          `attempt ${attempts} failed: ${error instanceof Error ? error.message : "unknown error"}`.slice(
            0,
            500,
          );
        if (attempts >= MAX_ATTEMPTS) {
          step.status = "failed";
          await save("failed", { attempts });
          return "failed";
        }
        if (step.name === "verify") step.status = "pending";
        await save("running", { attempts });
        await this.ctx.storage.setAlarm(Date.now() + 1000 * 2 ** attempts);
        return "running";
      }
    }
    await save("completed");
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return "completed";
  }
}

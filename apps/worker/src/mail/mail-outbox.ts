import { DurableObject } from "cloudflare:workers";
import { drainOutbox } from "./outbox.ts";

/** The least time between two runs: a failing provider is never hammered in a loop. */
const MIN_GAP_MS = 50;

/**
 * The clock of the mail outbox (mail/outbox.ts): the rows live in D1, this object only decides
 * when to send them. `kick` arms the alarm for now; the alarm sends what is due and re-arms for
 * the next retry. An alarm is durable: once `kick` has returned, the mail goes out even if the
 * Worker that asked is gone, and a run that throws is retried by the platform.
 */
export class MailOutbox extends DurableObject<Env> {
  /** Sends what is queued, soon (the alarm, not this call, does the sending). */
  async kick(): Promise<void> {
    const armed = await this.ctx.storage.getAlarm();
    const now = Date.now();
    if (armed === null || armed > now) await this.ctx.storage.setAlarm(now);
  }

  override async alarm(): Promise<void> {
    const next = await drainOutbox(this.env, Date.now());
    if (next === null) return;
    const at = Math.max(next, Date.now() + MIN_GAP_MS);
    // A kick during this run armed an earlier alarm: keep it (its mail was queued after the read).
    const armed = await this.ctx.storage.getAlarm();
    if (armed === null || armed > at) await this.ctx.storage.setAlarm(at);
  }
}

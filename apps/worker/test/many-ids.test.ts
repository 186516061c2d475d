import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { LeaseHolders } from "../src/billing/lease-holders.ts";
import { d1Source, scanStore } from "../src/erasure/scan.ts";
import { world } from "./helpers.ts";

/**
 * D1 and a Durable Object's SQLite bind at most 100 parameters per statement. Lists that grow
 * with an org (its sessions, a project's sessions to erase) travel as one JSON value instead.
 */
describe("id lists longer than a statement's 100 parameters", () => {
  const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it("the erasure scan looks for 150 ids at once and finds the one left", async () => {
    const w = await world();
    const needles = [...many(149, "ses_none_"), w.sessionId];
    const found = await scanStore(d1Source(env.DB), { needles });
    expect(found.map((f) => f.table)).toContain("sessions");
  });

  it("the account sums the spend of 150 sessions in one read", async () => {
    const w = await world();
    await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros: 1_000 });
    const spend = await billingAccount(env, w.orgId).spendBySession(many(150, "ses_x_"));
    expect(spend).toEqual({});
  });
});

describe("an account that sees many sessions over its life", () => {
  it("keeps in memory about the last minute's lease holders, not every one it ever saw", async () => {
    const stub = env.BILLING.get(env.BILLING.idFromName(`holders-${Date.now()}`));
    await runInDurableObject(stub, (_instance, state) => {
      const holders = new LeaseHolders(state.storage.sql, { listOpenHolds: () => [] }, env);
      const t0 = 1_800_000_000_000;
      for (let i = 0; i < 1_500; i++) holders.seen(`ses_old_${i}`, t0);
      expect(holders.tracked).toBe(1_500);
      // A minute later, new sessions: the old ones' write times are dropped as the map grows.
      for (let i = 0; i < 600; i++) holders.seen(`ses_new_${i}`, t0 + 61_000);
      expect(holders.tracked).toBeLessThanOrEqual(600);
      // Every session is still recorded for the reads to ask.
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM lease_sessions").one().n).toBe(
        2_100,
      );
    });
  });
});

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { api, world } from "./helpers.ts";

/**
 * A threshold the account is already past fires when it is set (issue 28): a low-balance alert set
 * above the balance used to wait for the next model call, so the person who set it heard nothing.
 */
describe("an alert set past the current state", () => {
  it("fires at once, once: a low-balance threshold above the balance", async () => {
    const w = await world();
    await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros: 5_000_000 });
    const alerts = async () =>
      (
        await api<{ items: { kind: string; message: string }[] }>(
          "GET",
          `/api/orgs/${w.orgId}/billing/alerts`,
          { token: w.admin.token },
        )
      ).body.items.filter((item) => item.kind === "low_balance");
    expect(await alerts()).toEqual([]);
    const set = await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.admin.token,
      body: { lowBalanceMicros: 10_000_000 },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const fired = await alerts();
    expect(fired).toHaveLength(1);
    expect(fired[0]?.message).toMatch(/\$5\.00/);
    // Saving again (or another setting) does not fire it a second time.
    await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.admin.token,
      body: { lowBalanceMicros: 10_000_000, runwayAlertDays: 3 },
    });
    expect(await alerts()).toHaveLength(1);
  });

  it("does not fire a threshold the balance is above", async () => {
    const w = await world();
    await billingAccount(env, w.orgId).open({ orgId: w.orgId, grantMicros: 5_000_000 });
    await api("PATCH", `/api/orgs/${w.orgId}/billing/settings`, {
      token: w.admin.token,
      body: { lowBalanceMicros: 1_000_000 },
    });
    const items = (
      await api<{ items: { kind: string }[] }>("GET", `/api/orgs/${w.orgId}/billing/alerts`, {
        token: w.admin.token,
      })
    ).body.items;
    expect(items).toEqual([]);
  });
});

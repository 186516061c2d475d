import { env } from "cloudflare:test";
import { newId } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { resolveLabels } from "../src/billing/labels.ts";
import { world } from "./helpers.ts";

/**
 * Billing's names for the ids of its pages: an end user never reads as a member, whatever the id
 * their tenant gave them (the security probe of 2026-12-06, finding 4).
 */
describe("billing labels", () => {
  it("marks an end user whose tenant id is a member's id as an end user, first", async () => {
    const w = await world();
    const endUser = newId("endUser");
    await env.DB.prepare(
      "INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, NULL, ?, ?)",
    )
      .bind(endUser, w.orgId, w.appId, w.owner.id, Date.now(), Date.now())
      .run();
    const labels = await resolveLabels(env.DB, w.orgId, { members: [w.owner.id, endUser] });
    expect(labels.member(endUser)).toBe(`End user: ${w.owner.id}`);
    expect(labels.member(w.owner.id)).not.toMatch(/end user/i);
  });
});

import { describe, expect, it } from "vitest";
import { api } from "./helpers.ts";

describe("health and static", () => {
  it("answers /api/health", async () => {
    const res = await api("GET", "/api/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
  });

  it("serves the web app for non-API paths", async () => {
    const res = await api("GET", "/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
  });

  it("answers unknown API routes with the error envelope", async () => {
    const res = await api("GET", "/.well-known/nope");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: "not_found", message: "No such route" } });
  });
});

import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, createApiClient } from "../../lib/api.ts";
import { CsvDownload } from "./csv-download.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("usage CSV", () => {
  it("is fetched with the bearer token", async () => {
    const seen: { path: string; authorization: string | undefined }[] = [];
    const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const path = String(input);
      const headers = (init?.headers ?? {}) as Record<string, string>;
      seen.push({ path, authorization: headers.authorization });
      if (path === "/api/auth/login") {
        return Response.json({ accessToken: "tok", expiresIn: 900, user: {} });
      }
      return new Response("created_at,request_id\n", { headers: { "content-type": "text/csv" } });
    });
    const client = createApiClient({ fetch: fetch as unknown as typeof globalThis.fetch });
    await client.login({ email: "a@b.co", password: "x" });
    const blob = await client.usageCsv("org_1", { from: "2026-11-01" });
    expect(await blob.text()).toBe("created_at,request_id\n");
    expect(seen.at(-1)).toEqual({
      path: "/api/orgs/org_1/billing/usage.csv?from=2026-11-01",
      authorization: "Bearer tok",
    });
  });

  it("downloads the blob through an object URL", async () => {
    const blob = new Blob(["a,b\n"], { type: "text/csv" });
    const usageCsv = vi.spyOn(api, "usageCsv").mockResolvedValue(blob);
    const create = vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:csv");
    const revoke = vi.spyOn(URL, "revokeObjectURL").mockImplementation(() => {});
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => {});
    render(<CsvDownload orgId="org_1" range={{}} />);
    fireEvent.click(screen.getByRole("button", { name: "Download usage CSV" }));
    await waitFor(() => expect(revoke).toHaveBeenCalledWith("blob:csv"));
    expect(usageCsv).toHaveBeenCalledWith("org_1", {});
    expect(create).toHaveBeenCalledWith(blob);
    expect(click).toHaveBeenCalledOnce();
  });
});

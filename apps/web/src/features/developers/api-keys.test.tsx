import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { renderInApp } from "../../test/render.tsx";
import { ApiKeys, keyInput } from "./api-keys.tsx";
import { developersApi } from "./developers-api.ts";
import { KEY } from "./fixtures.ts";

beforeEach(() => {
  vi.spyOn(developersApi, "apiKeys").mockResolvedValue({
    items: [KEY, { ...KEY, id: "key_2", name: "Old", revokedAt: "2026-12-05T10:00:00.000Z" }],
    nextCursor: null,
  });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("a new key's body", () => {
  it("is checked as the API checks it: a name, a scope, an expiry in the future", () => {
    const now = Date.parse("2026-12-06T12:00:00Z");
    expect(keyInput("", ["usage:read"], "", now)).toMatchObject({
      ok: false,
      refusal: { field: "name" },
    });
    expect(keyInput("Backend", [], "", now)).toEqual({
      ok: false,
      refusal: { field: "scopes", message: "choose at least one" },
    });
    expect(keyInput("Backend", ["usage:read"], "2026-12-06", now)).toEqual({
      ok: false,
      refusal: { field: "expiresAt", message: "must be in the future" },
    });
    expect(keyInput("Backend", ["usage:read", "end_users:token"], "2026-12-07", now)).toEqual({
      ok: true,
      value: {
        name: "Backend",
        scopes: ["end_users:token", "usage:read"],
        expiresAt: "2026-12-07",
      },
    });
  });
});

describe("ApiKeys", () => {
  it("lists keys with their prefix, scopes, last use and state; a revoked one has no revoke", async () => {
    await renderInApp(<ApiKeys orgId="org_1" />);
    const table = await screen.findByRole("table");
    const rows = within(table).getAllByRole("row");
    expect(rows[1]?.textContent).toContain("prly_sk_abcdefghijkl…");
    expect(rows[1]?.textContent).toContain("Active");
    expect(rows[1]?.textContent).toMatch(/Dec 6, 2026/);
    expect(rows[2]?.textContent).toContain("Revoked");
    expect(screen.queryByRole("button", { name: "Revoke Old" })).toBeNull();
  });

  it("makes a key with its scopes and shows the secret once", async () => {
    const create = vi
      .spyOn(developersApi, "createApiKey")
      .mockResolvedValue({ ...KEY, id: "key_3", secret: "prly_sk_abcdefghijkl_secret" });
    await renderInApp(<ApiKeys orgId="org_1" />);
    fireEvent.click(await screen.findByRole("button", { name: "New API key" }));
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "Shop backend" } });
    fireEvent.click(within(dialog).getByRole("checkbox", { name: /end_users:erase/ }));
    fireEvent.click(within(dialog).getByRole("button", { name: "Create key" }));
    await waitFor(() =>
      expect(create).toHaveBeenCalledWith("org_1", {
        name: "Shop backend",
        scopes: ["end_users:token", "end_users:erase"],
      }),
    );
    expect(await within(dialog).findByText("prly_sk_abcdefghijkl_secret")).toBeTruthy();
  });

  it("shows the API's refusal (50 active keys: 409)", async () => {
    vi.spyOn(developersApi, "createApiKey").mockRejectedValue(
      new ApiError("conflict", "This org has 50 active API keys: revoke one first", 409),
    );
    await renderInApp(<ApiKeys orgId="org_1" />);
    fireEvent.click(await screen.findByRole("button", { name: "New API key" }));
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "One more" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Create key" }));
    expect((await within(dialog).findByRole("alert")).textContent).toBe(
      "This org has 50 active API keys: revoke one first.",
    );
  });

  it("revokes a key after asking", async () => {
    const revoke = vi.spyOn(developersApi, "revokeApiKey").mockResolvedValue(undefined);
    await renderInApp(<ApiKeys orgId="org_1" />);
    fireEvent.click(await screen.findByRole("button", { name: "Revoke Shop backend" }));
    const confirm = await screen.findByRole("alertdialog");
    fireEvent.click(within(confirm).getByRole("button", { name: "Revoke key" }));
    await waitFor(() => expect(revoke).toHaveBeenCalledWith("org_1", "key_1"));
  });
});

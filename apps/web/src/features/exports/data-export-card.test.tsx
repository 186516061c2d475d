import type { DataExport, Page } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { renderInApp } from "../../test/render.tsx";
import { DataExportCard } from "./data-export-card.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const job = (patch: Partial<DataExport>): DataExport => ({
  id: "exp_1",
  kind: "account",
  orgId: null,
  status: "running",
  progress: { done: 1, total: 4 },
  createdAt: "2026-12-02T10:00:00.000Z",
  completedAt: null,
  expiresAt: null,
  downloadUrl: null,
  sizeBytes: null,
  error: null,
  ...patch,
});
const page = (...items: DataExport[]): Page<DataExport> => ({ items, nextCursor: null });

function renderCard(list: () => Promise<Page<DataExport>>, start: () => Promise<DataExport>) {
  return renderInApp(
    <DataExportCard
      id="t"
      title="Download your data"
      description="All of it"
      startLabel="Download your data"
      queryKey={["test-exports", Math.random()]}
      list={list}
      start={start}
    />,
  );
}

describe("the data export card", () => {
  it("starts an export, shows its progress while it runs, then the link and when it expires", async () => {
    const done = job({
      status: "completed",
      progress: { done: 4, total: 4 },
      downloadUrl: "https://parley.test/api/exports/exp_1/download?key=k",
      expiresAt: "2026-12-03T10:00:00.000Z",
      sizeBytes: 2048,
    });
    const list = vi
      .fn<() => Promise<Page<DataExport>>>()
      .mockResolvedValueOnce(page())
      .mockResolvedValue(page(done));
    const start = vi.fn(async () => job({}));
    await renderCard(list, start);
    const button = await screen.findByRole("button", { name: "Download your data" });
    fireEvent.click(button);
    expect(await screen.findByText(/1 of 4 parts/)).toBeTruthy();
    expect(screen.getByRole("button", { name: "Preparing…" })).toHaveProperty("disabled", true);
    const link = await screen.findByRole("link", { name: /Download archive/ }, { timeout: 4_000 });
    expect(link.getAttribute("href")).toBe(done.downloadUrl);
    expect(link.textContent).toContain("2.0 KB");
    expect(
      screen
        .getByText(/The link expires/)
        .querySelector("time")
        ?.getAttribute("datetime"),
    ).toBe(done.expiresAt);
    expect(start).toHaveBeenCalledTimes(1);
  });

  it("says why a start was refused and when an export failed", async () => {
    await renderCard(
      async () => page(job({ status: "failed", error: "the subject was erased" })),
      async () => {
        throw new ApiError("conflict", "An export is already being prepared; wait for it", 409);
      },
    );
    expect((await screen.findByText(/The export failed/)).textContent).toMatch(
      /subject was erased/,
    );
    fireEvent.click(screen.getByRole("button", { name: "Download your data" }));
    await waitFor(() => expect(screen.getByText(/already being prepared/)).toBeTruthy());
  });
});

import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api } from "../../lib/api.ts";
import { UsagePanel, usageRange } from "./usage-panel.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const empty = {
  orgId: "org_1",
  from: "2026-11-01T00:00:00.000Z",
  to: "2026-11-30T00:00:00.000Z",
  groupBy: "day" as const,
  items: [],
  totals: { requests: 0, promptTokens: 0, completionTokens: 0, costMicros: 0, priceMicros: 0 },
};

describe("usage range", () => {
  it("asks for the last 30 days by default, then for the days picked, the last one included", async () => {
    const usage = vi.spyOn(api, "usage").mockResolvedValue(empty as never);
    render(<UsagePanel orgId="org_1" />);
    await waitFor(() => expect(usage).toHaveBeenCalledWith("org_1", "day", {}));
    fireEvent.change(screen.getByLabelText("From"), { target: { value: "2026-11-01" } });
    fireEvent.change(screen.getByLabelText("To"), { target: { value: "2026-11-15" } });
    await waitFor(() =>
      expect(usage).toHaveBeenLastCalledWith("org_1", "day", {
        from: "2026-11-01",
        to: "2026-11-16",
      }),
    );
    expect(screen.getByRole("heading", { name: /2026-11-01 to 2026-11-15/ })).toBeTruthy();
  });

  it("shows the server's refusal of a range", async () => {
    vi.spyOn(api, "usage").mockRejectedValue(
      new ApiError("invalid_request", "from must be before to", 400, "query.from"),
    );
    render(<UsagePanel orgId="org_1" />);
    expect((await screen.findByRole("alert")).textContent).toMatch(/before to/);
  });

  it("turns the picked days into the API's half-open range, across a month end", () => {
    expect(usageRange("", "")).toEqual({});
    expect(usageRange("2026-10-31", "2026-11-30")).toEqual({
      from: "2026-10-31",
      to: "2026-12-01",
    });
  });
});

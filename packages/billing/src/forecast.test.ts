import { describe, expect, it } from "vitest";
import { FORECAST_WINDOW_DAYS, forecastDays, forecastRunway, runwayBelow } from "./forecast.ts";

const NOW = Date.parse("2026-12-02T12:00:00Z");

describe("the balance forecast", () => {
  it("spans the seven UTC days ending today", () => {
    expect(forecastDays(NOW)).toEqual([
      "2026-11-26",
      "2026-11-27",
      "2026-11-28",
      "2026-11-29",
      "2026-11-30",
      "2026-12-01",
      "2026-12-02",
    ]);
    expect(FORECAST_WINDOW_DAYS).toBe(7);
  });

  it("divides what is available by the window's daily rate, never promising more time", () => {
    // $7 over 7 days: $1 a day; $10 available lasts 10 days.
    const f = forecastRunway({ availableMicros: 10_000_000, spentMicros: 7_000_000, now: NOW });
    expect(f).toEqual({
      windowDays: 7,
      spentMicros: 7_000_000,
      dailyRateMicros: 1_000_000,
      daysLeft: 10,
      runsOutAt: "2026-12-12T12:00:00.000Z",
    });
    // A rate that does not divide evenly is rounded up, the days down (to a tenth).
    const odd = forecastRunway({ availableMicros: 1_000_000, spentMicros: 1_000_001, now: NOW });
    expect(odd.dailyRateMicros).toBe(142_858);
    expect(odd.daysLeft).toBe(6.9);
    expect(Date.parse(odd.runsOutAt ?? "")).toBeLessThan(NOW + 7 * 86_400_000);
  });

  it("says nothing runs out when nothing is spent, and zero days when nothing is left", () => {
    expect(forecastRunway({ availableMicros: 5, spentMicros: 0, now: NOW })).toMatchObject({
      dailyRateMicros: 0,
      daysLeft: null,
      runsOutAt: null,
    });
    const overdrawn = forecastRunway({ availableMicros: -50, spentMicros: 700, now: NOW });
    expect(overdrawn).toMatchObject({ dailyRateMicros: 100, daysLeft: 0 });
    expect(overdrawn.runsOutAt).toBe(new Date(NOW).toISOString());
  });

  it("never throws, whatever the balance: past a century it gives the days and no date (found by the outside probe)", () => {
    for (const availableMicros of [2_005_000_000, 1e12, Number.MAX_SAFE_INTEGER]) {
      for (const spentMicros of [1, 7, 112]) {
        const f = forecastRunway({ availableMicros, spentMicros, now: NOW });
        expect(Number.isFinite(f.daysLeft)).toBe(true);
        expect(f.runsOutAt).toBeNull();
      }
    }
    // Just inside a century a date is still given.
    const near = forecastRunway({ availableMicros: 36_000 * 7, spentMicros: 49, now: NOW });
    expect(near.daysLeft).toBe(36_000);
    expect(Date.parse(near.runsOutAt ?? "")).toBeGreaterThan(NOW);
  });

  it("is under a threshold of days only while something is being spent", () => {
    const f = forecastRunway({ availableMicros: 2_999_999, spentMicros: 7_000_000, now: NOW });
    expect(runwayBelow(f, 3, 2_999_999)).toBe(true);
    expect(runwayBelow(f, 3, 3_000_000)).toBe(false);
    const idle = forecastRunway({ availableMicros: 0, spentMicros: 0, now: NOW });
    expect(runwayBelow(idle, 30, 0)).toBe(false);
  });
});

/**
 * How long an org's balance lasts (issue 16): at the rate it spent over the last
 * {@link FORECAST_WINDOW_DAYS} UTC days (today included), what is available runs out in so many
 * days. A forecast, not money: the rate is rounded up to a whole micro-dollar a day (never
 * promising more time than the spend allows) and the days are kept to a tenth, rounded down.
 */
export const FORECAST_WINDOW_DAYS = 7;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Beyond this many days the forecast gives no date (`runsOutAt: null`), only the days. */
export const MAX_FORECAST_DAYS = 36_500;

export interface Forecast {
  windowDays: number;
  /** Billable spend over the window. */
  spentMicros: number;
  /** The window's spend per day, rounded up; 0 when nothing was spent. */
  dailyRateMicros: number;
  /** Days the available balance lasts at that rate; null when nothing is being spent. */
  daysLeft: number | null;
  /** When it runs out at that rate (ISO 8601); null when nothing is being spent or over a century out. */
  runsOutAt: string | null;
}

/** The UTC days of the window that ends today, oldest first: `2026-11-26` … `2026-12-02`. */
export function forecastDays(now: number): string[] {
  return Array.from({ length: FORECAST_WINDOW_DAYS }, (_, i) =>
    new Date(now - (FORECAST_WINDOW_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
}

export function forecastRunway(input: {
  availableMicros: number;
  spentMicros: number;
  now: number;
}): Forecast {
  const spentMicros = Math.max(0, input.spentMicros);
  const dailyRateMicros = Math.ceil(spentMicros / FORECAST_WINDOW_DAYS);
  if (dailyRateMicros === 0) {
    return {
      windowDays: FORECAST_WINDOW_DAYS,
      spentMicros,
      dailyRateMicros,
      daysLeft: null,
      runsOutAt: null,
    };
  }
  const available = Math.max(0, input.availableMicros);
  const days = available / dailyRateMicros;
  const daysLeft = Math.floor(days * 10) / 10;
  // Past a century the date says nothing a person can use, and far enough out it is not a date
  // at all (a RangeError that once failed every reserve of a well-funded, quiet org).
  const runsOutAt =
    days > MAX_FORECAST_DAYS ? null : new Date(input.now + Math.floor(days * DAY_MS)).toISOString();
  return { windowDays: FORECAST_WINDOW_DAYS, spentMicros, dailyRateMicros, daysLeft, runsOutAt };
}

/**
 * Whether the forecast is under an alert threshold of `days`: the balance lasts less than that
 * many days at the window's rate. Nothing spent is no alarm, whatever the balance.
 */
export function runwayBelow(forecast: Forecast, days: number, availableMicros: number): boolean {
  return (
    forecast.dailyRateMicros > 0 && Math.max(0, availableMicros) < forecast.dailyRateMicros * days
  );
}

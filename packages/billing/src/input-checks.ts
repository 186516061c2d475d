/**
 * Checks of what a caller hands the ledger that are not money (money.ts checks amounts). A
 * failure is a `RangeError`: a caller bug (an empty id, a fractional timestamp), never an
 * expected outcome, which the ledger returns as a value.
 */

export function assertId(value: string, label: string): void {
  if (typeof value !== "string" || value.length === 0) {
    throw new RangeError(`${label} must be a non-empty string`);
  }
}

export function assertTime(value: number, label: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative integer timestamp in ms`);
  }
}

export function assertCount(value: number, label: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative safe integer`);
  }
}

/** A duration in ms of at least 1 (a hold's or a lease's time to live). */
export function assertDuration(value: number, label: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${label} must be a positive integer`);
  }
}

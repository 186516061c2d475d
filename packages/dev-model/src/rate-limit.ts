/**
 * A per-key rate limit on chat requests (a fixed window), for `DevModelOptions.rateLimit`: past
 * `requests` in a window, a request is answered 429 with `Retry-After`, as OpenRouter does.
 */
export type RateLimit = {
  /** Chat requests allowed per window and key. */
  readonly requests: number;
  readonly windowMs: number;
};

export class RateLimiter {
  readonly #limit: RateLimit;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(limit: RateLimit) {
    this.#limit = { requests: Math.max(0, limit.requests), windowMs: Math.max(1, limit.windowMs) };
  }

  /** Counts a request of `key`: null when it may go on, else the seconds to wait (at least 1). */
  take(key: string, now = Date.now()): number | null {
    let window = this.#windows.get(key);
    if (window === undefined || now - window.start >= this.#limit.windowMs) {
      window = { start: now, count: 0 };
      this.#windows.delete(key);
      this.#windows.set(key, window);
      // Keys are API keys: a handful in practice, bounded anyway.
      if (this.#windows.size > 10_000)
        this.#windows.delete(this.#windows.keys().next().value ?? "");
    }
    if (window.count < this.#limit.requests) {
      window.count += 1;
      return null;
    }
    return Math.max(1, Math.ceil((window.start + this.#limit.windowMs - now) / 1000));
  }

  clear(): void {
    this.#windows.clear();
  }
}

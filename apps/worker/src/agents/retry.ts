/**
 * Retries an operation that failed with a transient storage error, a bounded number of times with
 * exponential backoff; any other error is rethrown at once.
 */
export interface RetryOptions {
  attempts: number;
  baseDelayMs: number;
  isTransient: (error: unknown) => boolean;
  sleep?: (ms: number) => Promise<void>;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function withRetry<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const sleep = options.sleep ?? wait;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= options.attempts || !options.isTransient(error)) throw error;
      await sleep(options.baseDelayMs * 2 ** (attempt - 1));
    }
  }
}

/**
 * SQLite and Durable Object storage errors worth another try: a busy or locked database, an I/O
 * hiccup, or the runtime's "try again" family. A constraint violation or a bad statement is not.
 */
export function isTransientStorageError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /SQLITE_BUSY|SQLITE_LOCKED|SQLITE_IOERR|database is locked|disk I\/O error|Network connection lost|try again|overloaded|internal error/i.test(
    message,
  );
}

export interface DevStack {
  /** `http://127.0.0.1:<port>`: API, agents and web app. */
  base: string;
  port: number;
  /** `http://127.0.0.1:<port>` of the development mailbox (packages/dev-mailbox). */
  mailbox: string;
  /** `http://localhost:<port>` of the example host app, when it was asked for; otherwise null. */
  exampleBase: string | null;
  /** The file the example host app keeps its set-up in (its org's owner, app, key), or null. */
  exampleState: string | null;
  /** Everything the stack printed so far. */
  log(): string;
  /** Ends the whole process group and removes the state directory. */
  stop(): Promise<void>;
}

/**
 * Starts the platform as `pnpm dev` does (`pnpm dev --example` with `example`), on free ports with
 * temporary state; resolves when healthy. A port taken by another process before its service bound
 * it starts the stack again on fresh ports (up to three times, within `timeoutMs`); a stack that
 * exits before it is healthy otherwise fails at once.
 */
export function startDevStack(options?: {
  timeoutMs?: number;
  example?: boolean;
}): Promise<DevStack>;

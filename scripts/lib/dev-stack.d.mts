export interface DevStack {
  /** `http://127.0.0.1:<port>`: API, agents and web app. */
  base: string;
  port: number;
  /** Everything the stack printed so far. */
  log(): string;
  /** Ends the whole process group and removes the state directory. */
  stop(): Promise<void>;
}

/** Starts the platform as `pnpm dev` does, on free ports with temporary state; resolves when healthy. */
export function startDevStack(options?: { timeoutMs?: number }): Promise<DevStack>;

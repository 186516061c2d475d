#!/usr/bin/env node
/**
 * `node src/cli.ts [--port 8789] [--host 127.0.0.1] [--latency-ms N] [--tokens-per-second N]
 *  [--reply-tokens 24] [--api-key KEY] [--generation-delay-ms 500] [--prompt-cache-min-tokens 1024]
 *  [--rate-limit REQUESTS/SECONDS]`; env DEV_MODEL_PORT, DEV_MODEL_HOST, DEV_MODEL_API_KEY.
 * Without `--latency-ms` / `--tokens-per-second`, each model keeps its own pace.
 * Prints one line with the base URL, then serves until SIGINT or SIGTERM.
 */
import { parseArgs } from "node:util";
import { startDevModel } from "./server.ts";

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) {
    process.stderr.write(`dev model: --${name} must be a non-negative number, got "${value}"\n`);
    process.exit(2);
  }
  return n;
}

/** `--rate-limit 60/60`: 60 chat requests per 60 seconds and API key. */
function rateLimitOption(value: string | undefined) {
  if (value === undefined || value === "") return undefined;
  const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(value);
  if (match === null) {
    process.stderr.write(`dev model: --rate-limit must be REQUESTS/SECONDS, got "${value}"\n`);
    process.exit(2);
  }
  return { requests: Number(match[1]), windowMs: Number(match[2]) * 1000 };
}

// `pnpm start -- --port 1` forwards the `--` separator too.
const argv = process.argv.slice(2);
const { values } = parseArgs({
  args: argv[0] === "--" ? argv.slice(1) : argv,
  options: {
    port: { type: "string" },
    host: { type: "string" },
    "latency-ms": { type: "string" },
    "tokens-per-second": { type: "string" },
    "reply-tokens": { type: "string" },
    "api-key": { type: "string" },
    "generation-delay-ms": { type: "string" },
    "prompt-cache-min-tokens": { type: "string" },
    "rate-limit": { type: "string" },
  },
  strict: true,
});

const model = await startDevModel({
  port: numberOption("port", values.port ?? process.env.DEV_MODEL_PORT) ?? 8789,
  host: values.host ?? process.env.DEV_MODEL_HOST ?? "127.0.0.1",
  latencyMs: numberOption("latency-ms", values["latency-ms"]),
  tokensPerSecond: numberOption("tokens-per-second", values["tokens-per-second"]),
  replyTokens: numberOption("reply-tokens", values["reply-tokens"]),
  apiKey: values["api-key"] ?? process.env.DEV_MODEL_API_KEY,
  generationDelayMs: numberOption("generation-delay-ms", values["generation-delay-ms"]),
  promptCache: {
    minTokens: numberOption("prompt-cache-min-tokens", values["prompt-cache-min-tokens"]),
  },
  rateLimit: rateLimitOption(values["rate-limit"]),
});
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  model.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
// Handlers first, then the line a supervisor waits for: a signal sent right after it must find them.
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
process.stdout.write(`dev model listening on ${model.url}\n`);

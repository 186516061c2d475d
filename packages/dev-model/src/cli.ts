#!/usr/bin/env node
/**
 * `node src/cli.ts [--port 8789] [--host 127.0.0.1] [--latency-ms 0] [--tokens-per-second 0]
 *  [--reply-tokens 24] [--api-key KEY]`; env DEV_MODEL_PORT, DEV_MODEL_HOST, DEV_MODEL_API_KEY.
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

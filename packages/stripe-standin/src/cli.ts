#!/usr/bin/env node
/**
 * `node src/cli.ts [--port 12111] [--host 127.0.0.1] [--webhook-url URL]... [--webhook-secret whsec_...]
 *  [--public-url URL] [--retry-attempts 5] [--retry-base-delay-ms 200]`; env STRIPE_STANDIN_PORT,
 * STRIPE_STANDIN_HOST, STRIPE_WEBHOOK_URL (comma-separated), STRIPE_WEBHOOK_SECRET,
 * STRIPE_STANDIN_PUBLIC_URL. Prints one line with the base URL, logs each delivery attempt to
 * stderr (type, id, status; never a body), and serves until SIGINT or SIGTERM.
 */
import { parseArgs } from "node:util";
import { startStripeStandin } from "./server.ts";
import { DEFAULT_RETRY } from "./webhooks.ts";

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(
      `stripe stand-in: --${name} must be a non-negative integer, got "${value}"\n`,
    );
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
    "webhook-url": { type: "string", multiple: true },
    "webhook-secret": { type: "string" },
    "public-url": { type: "string" },
    "retry-attempts": { type: "string" },
    "retry-base-delay-ms": { type: "string" },
  },
  strict: true,
});

const webhookUrl =
  values["webhook-url"] ??
  (process.env.STRIPE_WEBHOOK_URL ?? "")
    .split(",")
    .map((url) => url.trim())
    .filter((url) => url !== "");
const givenSecret = values["webhook-secret"] ?? process.env.STRIPE_WEBHOOK_SECRET;
if (givenSecret !== undefined && !givenSecret.startsWith("whsec_")) {
  process.stderr.write("stripe stand-in: the webhook secret must start with whsec_\n");
  process.exit(2);
}
const attempts = numberOption("retry-attempts", values["retry-attempts"]) ?? DEFAULT_RETRY.attempts;
if (attempts < 1) {
  process.stderr.write("stripe stand-in: --retry-attempts must be at least 1\n");
  process.exit(2);
}

const standin = await startStripeStandin({
  port: numberOption("port", values.port ?? process.env.STRIPE_STANDIN_PORT) ?? 12111,
  host: values.host ?? process.env.STRIPE_STANDIN_HOST ?? "127.0.0.1",
  webhookUrl,
  ...(givenSecret === undefined ? {} : { webhookSecret: givenSecret }),
  retry: {
    attempts,
    baseDelayMs:
      numberOption("retry-base-delay-ms", values["retry-base-delay-ms"]) ??
      DEFAULT_RETRY.baseDelayMs,
  },
  ...((values["public-url"] ?? process.env.STRIPE_STANDIN_PUBLIC_URL)
    ? { publicUrl: values["public-url"] ?? process.env.STRIPE_STANDIN_PUBLIC_URL }
    : {}),
  onDelivery: (d) => {
    const outcome = d.status === null ? (d.error ?? "no response") : String(d.status);
    const next = d.ok ? "" : d.willRetry ? ", will retry" : ", giving up";
    process.stderr.write(
      `stripe stand-in: ${d.eventType} ${d.eventId} -> ${d.url}: ${outcome} (attempt ${d.attempt}${next})\n`,
    );
  },
});
// Handlers go in before the line is printed: whoever reads it may signal at once.
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  standin.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
process.stdout.write(`stripe stand-in listening on ${standin.url}\n`);
if (givenSecret === undefined) {
  // A generated test-mode secret is useless unless the receiver learns it.
  process.stdout.write(`webhook signing secret (generated): ${standin.webhookSecret}\n`);
}

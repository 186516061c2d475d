#!/usr/bin/env node
/**
 * `node src/cli.ts [--port 8025] [--host 127.0.0.1]`; env DEV_MAILBOX_PORT, DEV_MAILBOX_HOST and
 * DEV_MAILBOX_TOKEN (when set, sending needs it as a bearer token). Prints one line with the URL,
 * logs each message's id, kind and outcome to stderr (never an address, subject or body: they
 * hold reset links), and serves until SIGINT or SIGTERM.
 */
import { parseArgs } from "node:util";
import { startDevMailbox } from "./server.ts";

const argv = process.argv.slice(2);
const { values } = parseArgs({
  args: argv[0] === "--" ? argv.slice(1) : argv,
  options: { port: { type: "string" }, host: { type: "string" } },
  strict: true,
});
const portText = values.port ?? process.env.DEV_MAILBOX_PORT ?? "8025";
const port = Number(portText);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`dev mailbox: --port must be a port number, got "${portText}"\n`);
  process.exit(2);
}
const mailbox = await startDevMailbox({
  port,
  host: values.host ?? process.env.DEV_MAILBOX_HOST ?? "127.0.0.1",
  ...(process.env.DEV_MAILBOX_TOKEN ? { token: process.env.DEV_MAILBOX_TOKEN } : {}),
  onMessage: ({ id, kind, outcome }) =>
    process.stderr.write(
      `dev mailbox: ${outcome}${id ? ` #${id}` : ""}${kind ? ` (${kind})` : ""}\n`,
    ),
});
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  mailbox.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
process.stdout.write(`dev mailbox listening on ${mailbox.url}\n`);

/**
 * The pure parts of `pnpm chat`: arguments, agent URLs, token expiry, output formatting.
 */
import { parseArgs } from "node:util";
import type { UIMessage } from "ai";

export const USAGE = `Usage: pnpm chat [options]

Chat from the terminal with a Parley agent (pnpm dev serves one on http://127.0.0.1:8787).

  --url <origin>        the platform (default $PARLEY_URL or http://127.0.0.1:8787)
  --email <email>       log in as (default $PARLEY_EMAIL)
  --password <pw>       (default $PARLEY_PASSWORD)
  --token <jwt>         an access token instead of logging in (default $PARLEY_TOKEN)
  --project <id>        the project's free onboarding preview  (/agents/onboarding-agent/<id>)
  --session <id>        an assistant session                    (/agents/assistant-agent/<id>)
  --agent-url <url>     any agent URL, e.g. a bare agent with no login
  --history <n>         earlier messages to show on connect (default 10)
  -h, --help

Without --project, --session or --agent-url it lists your projects and lets you pick one.
In the chat: /abort (or Ctrl-C) stops a streaming reply, Ctrl-C twice or /quit exits,
/clear clears the conversation, /history shows it.
`;

export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliUsageError";
  }
}

export interface CliOptions {
  url: string;
  email: string | undefined;
  password: string | undefined;
  token: string | undefined;
  project: string | undefined;
  session: string | undefined;
  agentUrl: string | undefined;
  history: number;
  help: boolean;
}

const nonEmpty = (value: string | undefined) => (value === "" ? undefined : value);

/** Flags win over the environment. `pnpm chat -- --flag` forwards the `--` too: it is skipped. */
export function parseCliArgs(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): CliOptions {
  const args = argv[0] === "--" ? argv.slice(1) : [...argv];
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        url: { type: "string" },
        email: { type: "string" },
        password: { type: "string" },
        token: { type: "string" },
        project: { type: "string" },
        session: { type: "string" },
        "agent-url": { type: "string" },
        history: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    throw new CliUsageError(error instanceof Error ? error.message : String(error));
  }
  const text = (name: string) => {
    const value = values[name];
    return typeof value === "string" ? nonEmpty(value) : undefined;
  };
  const targets = [text("project"), text("session"), text("agent-url")].filter(Boolean);
  if (targets.length > 1) {
    throw new CliUsageError("Pass only one of --project, --session and --agent-url.");
  }
  const historyText = text("history");
  const history = historyText === undefined ? 10 : Number(historyText);
  if (!Number.isInteger(history) || history < 0) {
    throw new CliUsageError(`--history must be a whole number, got "${historyText}".`);
  }
  return {
    url: (text("url") ?? nonEmpty(env.PARLEY_URL) ?? "http://127.0.0.1:8787").replace(/\/+$/, ""),
    email: text("email") ?? nonEmpty(env.PARLEY_EMAIL),
    password: text("password") ?? nonEmpty(env.PARLEY_PASSWORD),
    token: text("token") ?? nonEmpty(env.PARLEY_TOKEN),
    project: text("project"),
    session: text("session"),
    agentUrl: text("agent-url"),
    history,
    help: values.help === true,
  };
}

/** The agent URL the options name, or `undefined` when the user still has to pick one. */
export function agentUrlFor(options: CliOptions): string | undefined {
  if (options.agentUrl !== undefined) return options.agentUrl;
  if (options.project !== undefined) {
    return `${options.url}/agents/onboarding-agent/${encodeURIComponent(options.project)}`;
  }
  if (options.session !== undefined) {
    return `${options.url}/agents/assistant-agent/${encodeURIComponent(options.session)}`;
  }
  return undefined;
}

/** A JWT's `exp` in epoch milliseconds, or `undefined` for a token that is not a readable JWT. */
export function tokenExpiresAt(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const exp = (claims as { exp?: unknown } | null)?.exp;
    return typeof exp === "number" ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** A message's text parts, joined. */
export function messageText(message: UIMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** Micro-dollars as a person reads them: `$0.0012`, `$1,234.50`. */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(micros));
  const whole = Math.floor(abs / 1_000_000).toLocaleString("en-US");
  const fraction = String(abs % 1_000_000)
    .padStart(6, "0")
    .replace(/0+$/, "")
    .padEnd(2, "0");
  return `${sign}$${whole}.${fraction}`;
}

/** Keys the reply line never shows: bookkeeping, not news for the person chatting. */
const QUIET_KEYS = new Set(["turnId", "steps", "tokens", "priceMicros", "finish"]);

/**
 * The reply's metadata as one readable line (`cost $0.0012 · 1,234 tokens`, `stopped ·
 * code: model_error`, `code: preview_exhausted · 3 free turns left`), or `undefined` when there is
 * nothing beyond a normal finish.
 */
export function formatMetadata(metadata: Record<string, unknown> | undefined): string | undefined {
  if (metadata === undefined) return undefined;
  const parts: string[] = [];
  if (metadata.finish === "stopped" || metadata.finish === "failed") parts.push(metadata.finish);
  if (typeof metadata.priceMicros === "number")
    parts.push(`cost ${formatUsd(metadata.priceMicros)}`);
  const tokens = metadata.tokens as { promptTokens?: unknown; completionTokens?: unknown } | null;
  if (tokens && typeof tokens === "object") {
    const total =
      (typeof tokens.promptTokens === "number" ? tokens.promptTokens : 0) +
      (typeof tokens.completionTokens === "number" ? tokens.completionTokens : 0);
    parts.push(`${total.toLocaleString("en-US")} tokens`);
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (QUIET_KEYS.has(key) || (key === "finishReason" && value === "stop")) continue;
    if (key === "freeTurnsLeft" && typeof value === "number") {
      parts.push(`${value} free turns left`);
      continue;
    }
    if (key === "profile" || key === "model") {
      const named = key === "profile" ? profileText(value) : modelText(value);
      if (named !== undefined) {
        parts.push(`${key}: ${named}`);
        continue;
      }
    }
    parts.push(`${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  }
  return parts.length === 0 ? undefined : parts.join(" · ");
}

/**
 * The reply's profile (`{ id, version, name? }`, packages/shared replies.ts) as words: `built-in`
 * for Parley's own (id null), else its name (or id) and version. Undefined for another shape.
 */
function profileText(value: unknown): string | undefined {
  const profile = value as { id?: unknown; version?: unknown; name?: unknown } | null;
  if (!profile || typeof profile !== "object") return undefined;
  if (profile.id === null) return "built-in";
  if (typeof profile.id !== "string") return undefined;
  const name = typeof profile.name === "string" && profile.name !== "" ? profile.name : profile.id;
  return typeof profile.version === "number" ? `${name} v${profile.version}` : name;
}

/** The reply's model (`{ id, name }`) as `Name (id)`, or its id alone. */
function modelText(value: unknown): string | undefined {
  const model = value as { id?: unknown; name?: unknown } | null;
  if (!model || typeof model !== "object" || typeof model.id !== "string") return undefined;
  return typeof model.name === "string" && model.name !== "" && model.name !== model.id
    ? `${model.name} (${model.id})`
    : model.id;
}

/** A platform error body's `code: message`, or the status. */
export function describeError(status: number, body: unknown): string {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code === "string") {
    return `${status} ${error.code}${typeof error.message === "string" ? `: ${error.message}` : ""}`;
  }
  return `${status}${typeof body === "string" && body !== "" ? ` ${body.slice(0, 200)}` : ""}`;
}

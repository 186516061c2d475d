#!/usr/bin/env node
/**
 * `pnpm chat`: chat with a Parley agent from the terminal. Logs in (`POST /api/auth/login`),
 * connects with the token in the upgrade's Authorization header (never in the URL), and streams replies. `--help` lists the flags (see cli-support.ts).
 */
import readline from "node:readline";
import { Writable } from "node:stream";
import { ChatClient, ChatClientError } from "./chat-client.ts";
import {
  agentUrlFor,
  type CliOptions,
  CliUsageError,
  describeError,
  formatMetadata,
  messageText,
  parseCliArgs,
  tokenExpiresAt,
  USAGE,
} from "./cli-support.ts";
import type { Turn } from "./turn.ts";

const out = process.stdout;
const print = (line = "") => out.write(`${line}\n`);
const interactive = process.stdin.isTTY === true;

// One readline for the whole session. Every line is queued the moment it is read, so piped input
// is not lost while the client logs in or connects. Output goes through a switch that can mute the
// echo while a password is typed.
let muted = false;
const rlOutput = new Writable({
  write(chunk, _encoding, callback) {
    if (!muted) out.write(chunk);
    callback();
  },
});
const rl = readline.createInterface({
  input: process.stdin,
  output: rlOutput,
  terminal: interactive,
});
const lines: string[] = [];
let inputClosed = false;
let lineWaiter: (() => void) | undefined;
/** Handles a line before it is queued (`/abort` while a reply streams); true when consumed. */
let intercept: (line: string) => boolean = () => false;
rl.on("line", (line) => {
  if (intercept(line)) return;
  lines.push(line);
  lineWaiter?.();
});
rl.on("close", () => {
  inputClosed = true;
  lineWaiter?.();
});

async function nextLine(prompt?: string): Promise<string | null> {
  if (prompt !== undefined && interactive) {
    rl.setPrompt(prompt);
    rl.prompt();
  } else if (prompt !== undefined && lines.length === 0 && !inputClosed) {
    out.write(prompt);
  }
  while (lines.length === 0) {
    if (inputClosed) return null;
    await new Promise<void>((resolve) => {
      lineWaiter = () => {
        lineWaiter = undefined;
        resolve();
      };
    });
  }
  return lines.shift() ?? null;
}

async function ask(question: string, options: { secret?: boolean } = {}): Promise<string> {
  if (options.secret && interactive) {
    out.write(question);
    muted = true;
    const answer = await nextLine("");
    muted = false;
    out.write("\n");
    return answer ?? "";
  }
  return (await nextLine(question)) ?? "";
}

async function login(base: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw new Error(`login failed: ${describeError(response.status, body)}`);
  const token = (body as { accessToken?: unknown } | undefined)?.accessToken;
  if (typeof token !== "string") throw new Error("login answered without an accessToken");
  return token;
}

/**
 * The token source the client calls on every (re)connect: a fixed `--token`, or a login kept
 * fresh (access tokens are short-lived; a reconnect after expiry logs in again).
 */
async function tokenSource(options: CliOptions): Promise<(() => Promise<string>) | undefined> {
  const fixed = options.token;
  if (fixed !== undefined) return async () => fixed;
  let { email, password } = options;
  const needsLogin = options.agentUrl === undefined || email !== undefined;
  if (!needsLogin) return undefined;
  if (!interactive && (email === undefined || password === undefined)) {
    throw new CliUsageError(
      "Pass --email and --password (or set PARLEY_EMAIL and PARLEY_PASSWORD), or --token.",
    );
  }
  email ??= await ask("email: ");
  password ??= await ask("password: ", { secret: true });
  const credentials = { email, password };
  let current = await login(options.url, credentials.email, credentials.password);
  return async () => {
    const expiresAt = tokenExpiresAt(current);
    if (expiresAt !== undefined && expiresAt - Date.now() < 30_000) {
      current = await login(options.url, credentials.email, credentials.password);
    }
    return current;
  };
}

async function getJson(url: string, token: string): Promise<unknown> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok)
    throw new Error(`GET ${new URL(url).pathname}: ${describeError(response.status, body)}`);
  return body;
}

type Named = { id: string; name?: string; title?: string | null };
const itemsOf = (body: unknown): Named[] => (body as { items?: Named[] } | undefined)?.items ?? [];

/** Lists the user's projects (and a picked project's sessions) and asks which agent to open. */
async function pickAgent(
  options: CliOptions,
  token: (() => Promise<string>) | undefined,
): Promise<string | undefined> {
  if (token === undefined) return undefined;
  const bearer = await token();
  const projects: { org: Named; project: Named }[] = [];
  for (const org of itemsOf(await getJson(`${options.url}/api/orgs`, bearer))) {
    const url = `${options.url}/api/orgs/${encodeURIComponent(org.id)}/projects`;
    for (const project of itemsOf(await getJson(url, bearer))) projects.push({ org, project });
  }
  if (projects.length === 0) {
    print("You have no projects yet: create one (POST /api/orgs/:orgId/projects), then");
    print("  pnpm chat --project <projectId>");
    return undefined;
  }
  print("Your projects:");
  projects.forEach(({ org, project }, i) => {
    print(`  ${i + 1}) ${org.name ?? org.id} / ${project.name ?? project.id}  (${project.id})`);
  });
  if (!interactive) {
    print("Pass one with --project <id> (onboarding preview) or --session <id> (a session).");
    return undefined;
  }
  const picked = projects[Number(await ask(`Project [1-${projects.length}]: `)) - 1];
  if (!picked) return undefined;
  const projectId = picked.project.id;
  const sessionsUrl = `${options.url}/api/projects/${encodeURIComponent(projectId)}/sessions`;
  const sessions = itemsOf(await getJson(sessionsUrl, bearer));
  if (sessions.length > 0) {
    print("  0) the onboarding preview");
    sessions.forEach((s, i) => {
      print(`  ${i + 1}) session ${s.title ?? "(untitled)"}  (${s.id})`);
    });
    const session = sessions[Number(await ask(`Chat [0-${sessions.length}]: `)) - 1];
    if (session) return agentUrlFor({ ...options, session: session.id });
  }
  return agentUrlFor({ ...options, project: projectId });
}

function showMessages(client: ChatClient, limit: number): void {
  const messages = client.messages();
  const shown = messages.slice(Math.max(0, messages.length - limit));
  if (shown.length < messages.length) {
    print(`(${messages.length - shown.length} earlier messages; /history shows all)`);
  }
  for (const message of shown) {
    print(`${message.role === "user" ? "you" : message.role}> ${messageText(message)}`);
  }
}

async function chat(client: ChatClient, options: CliOptions): Promise<void> {
  let current: Turn | undefined;
  let aborting = false;
  let lastInterrupt = 0;
  let exiting = false;

  const exit = (code: number) => {
    if (exiting) return;
    exiting = true;
    out.write("\n");
    client.close().finally(() => process.exit(code));
  };
  const abort = () => {
    if (!current?.pending || aborting) return false;
    aborting = true;
    current.abort();
    return true;
  };
  // Ctrl-C stops a streaming reply; a second one (or one while idle, twice) exits.
  const onInterrupt = () => {
    const now = Date.now();
    if (abort()) {
      out.write(" [aborting]");
    } else if (now - lastInterrupt < 2_000 || current?.pending) {
      exit(130);
    } else {
      print("\n(Ctrl-C again to exit, or /quit)");
      if (interactive) rl.prompt();
    }
    lastInterrupt = now;
  };
  rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);
  intercept = (line) => current?.pending === true && line.trim() === "/abort" && abort();

  client.on("disconnect", ({ willReconnect }) => {
    if (!exiting)
      process.stderr.write(willReconnect ? "\n[reconnecting...]\n" : "\n[disconnected]\n");
  });
  client.on("open", (generation) => {
    if (generation > 1) process.stderr.write("[reconnected]\n");
  });

  showMessages(client, options.history);
  for (;;) {
    const line = await nextLine("you> ");
    if (line === null) break;
    const command = line.trim();
    if (command === "") continue;
    if (command === "/quit" || command === "/exit") break;
    if (command === "/abort") {
      print("(nothing to abort)");
      continue;
    }
    if (command === "/clear") {
      client.clear();
      print("(cleared)");
      continue;
    }
    if (command === "/history") {
      showMessages(client, Number.POSITIVE_INFINITY);
      continue;
    }
    if (command === "/help") {
      print("/abort  /clear  /history  /quit");
      continue;
    }
    const turn = client.send(line);
    current = turn;
    aborting = false;
    out.write("assistant> ");
    for await (const delta of turn.textStream) out.write(delta);
    const result = await turn.done;
    current = undefined;
    out.write("\n");
    if (result.outcome === "aborted") print("[aborted]");
    else if (result.error !== undefined) print(`[${result.outcome}] ${result.error}`);
    else if (result.outcome !== "completed") print(`[${result.outcome}]`);
    const metadata = formatMetadata(result.messageMetadata);
    if (metadata !== undefined) print(`  · ${metadata}`);
  }
  exit(0);
}

/** The exit code, or `undefined` once the chat runs (it exits the process itself). */
async function main(): Promise<number | undefined> {
  let options: CliOptions;
  try {
    options = parseCliArgs(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    out.write(USAGE);
    return 0;
  }
  const token = await tokenSource(options);
  const url = agentUrlFor(options) ?? (await pickAgent(options, token));
  if (url === undefined) return 1;
  const client = new ChatClient(url, { token });
  try {
    await client.connect();
  } catch (error) {
    if (error instanceof ChatClientError && error.status !== undefined) {
      process.stderr.write(
        `The agent refused the connection: ${describeError(error.status, error.body)}\n`,
      );
      return 1;
    }
    throw error;
  }
  print(
    `connected to ${client.identity?.agent ?? "agent"} ${client.identity?.name ?? ""}`.trimEnd(),
  );
  await chat(client, options);
  return undefined;
}

main().then(
  (code) => {
    if (code === undefined) return;
    rl.close();
    process.exitCode = code;
  },
  (error: unknown) => {
    const message =
      error instanceof CliUsageError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`${message}\n`);
    rl.close();
    process.exit(1);
  },
);

// Turn overhead (issue 8, item 1): an assistant turn on the platform (token check, membership,
// reservation, context, settlement) against a bare AIChatAgent turn (no auth, no billing), both
// under wrangler dev, both answered by the dev model at zero latency, driven over real WebSockets
// from Node, interleaved in one run.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { startDevMailbox } from "../packages/dev-mailbox/src/index.ts";
import { startDevModel } from "../packages/dev-model/src/index.ts";
import { missingDevSecrets } from "../scripts/lib/dev-secrets.mjs";
import { json, mailboxes, ms, signUp, startWorker, summarize, wranglerRun } from "./lib.mjs";

const root = path.resolve(import.meta.dirname, "..");

/**
 * The platform under wrangler dev with fresh secrets and migrated D1, answering from `modelUrl`;
 * `vars` override wrangler.jsonc's (a bigger sign-up grant for long runs, say).
 */
export async function platform(modelUrl, vars = {}, options = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-bench-env-"));
  const envFile = path.join(dir, ".env");
  // Every secret wrangler.jsonc requires, made as `pnpm dev` makes them (scripts/lib/dev-secrets.mjs).
  const stripe = { STRIPE_SECRET_KEY: "sk_test_bench", STRIPE_WEBHOOK_SECRET: "whsec_bench" };
  const secrets = { ...stripe, ...(await missingDevSecrets(stripe)) };
  writeFileSync(
    envFile,
    Object.entries(secrets)
      .map(([k, v]) => `${k}='${v}'`)
      .join("\n"),
  );
  const config = options.config ?? path.join(root, "wrangler.jsonc");
  // wrangler refuses to start without the assets directory; the API and agents do not need the
  // web build in it (`pnpm bench size` and `web` build it).
  mkdirSync(path.join(root, "apps/web/dist"), { recursive: true });
  // Mail goes to a development mailbox, where `signUp` reads the verification link that brings
  // the sign-up grant (docs/2026-12-06-mail.md).
  const mailbox = await startDevMailbox({ port: 0 });
  const worker = await startWorker(config, {
    // Offline, as `pnpm dev` without an OpenRouter key: the dev model's ids are the catalogue's.
    vars: {
      MODEL_BASE_URL: modelUrl,
      MODEL_ID: "parley/dev",
      CATALOGUE_DEV_MODELS: "true",
      MAIL_TRANSPORT: "dev",
      MAIL_DEV_URL: mailbox.url,
      ...vars,
    },
    envFile,
    readyPath: "/api/health",
    ...options,
    prepare: (state) =>
      wranglerRun([
        "d1",
        "migrations",
        "apply",
        "DB",
        "--local",
        "--config",
        config,
        "--persist-to",
        state,
      ]),
  });
  mailboxes.set(worker.url, mailbox.url);
  return {
    ...worker,
    stop() {
      worker.stop();
      void mailbox.close();
    },
  };
}

/**
 * Instructions of a realistic size for a tenant's profile (about 1.5 KB): what the scaffolding
 * escapes and frames every turn.
 */
const BENCH_INSTRUCTIONS = Array.from(
  { length: 12 },
  (_, i) =>
    `Rule ${i + 1}: answer as the support desk of Bench Inc., in short paragraphs, citing the plan the customer is on; never promise refunds or dates.`,
).join("\n");

/**
 * The benchmarks' non-default model: an OpenRouter model of the platform's catalogue, which the
 * dev model answers as it answers `parley/dev` (at its own price). Not Dev Fast or Dev Large:
 * their prompt cache hashes every prefix of a growing session in the dev model's process, on the
 * same cores, which would be measured as the platform's time.
 */
const BENCH_MODEL = "openai/gpt-4.1";

/**
 * Makes the project run a tenant's own profile on a model other than the platform default (issue
 * 29's benchmark condition): the org allows it, a profile with instructions, sampling and two of
 * the built-in tools runs on it, and the project uses it.
 */
async function useTenantProfile(base, { token, orgId, post }, projectId) {
  const send = (method, p, body) =>
    json(`${base}${p}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  await send("PUT", `/api/orgs/${orgId}/models`, { models: ["parley/dev", BENCH_MODEL] });
  const profile = await post(`/api/orgs/${orgId}/profiles`, {
    name: "Bench support",
    instructions: BENCH_INSTRUCTIONS,
    model: BENCH_MODEL,
    temperature: 0.4,
    tools: ["read_project_memory", "get_balance"],
  });
  await send("PATCH", `/api/projects/${projectId}`, { defaultProfileId: profile.id });
}

/**
 * A member with a funded org, a project and `count` assistant sessions; returns their chat URLs and
 * the token. `profile`: the project runs a tenant's profile on a non-default model.
 */
export async function assistantSessions(base, count = 1, { profile = false } = {}) {
  const member = await signUp(base, "bench");
  const { token, orgId, post } = member;
  const project = await post(`/api/orgs/${orgId}/projects`, { name: "Bench" });
  if (profile) await useTenantProfile(base, member, project.id);
  const urls = [];
  for (let i = 0; i < count; i++) {
    const session = await post(`/api/projects/${project.id}/sessions`, {});
    urls.push(`${base}/agents/assistant-agent/${session.id}`);
  }
  return { urls, token };
}

/** The agents of the turn benchmark, interleaved turn by turn in one run. */
const KINDS = ["baseline", "platform", "profile"];

export async function benchTurns({ turns = 150, extraVars = {} } = {}) {
  const model = await startDevModel({ port: 0, latencyMs: 0, tokensPerSecond: 0 });
  const bare = await startWorker(
    path.join(root, "packages/chat-client/test/fixture/wrangler.jsonc"),
    {
      vars: { DEV_MODEL_URL: model.url, MODEL_ID: "parley/dev" },
      readyPath: "/",
    },
  );
  const full = await platform(model.url, extraVars);
  try {
    const plain = await assistantSessions(full.url);
    const shaped = await assistantSessions(full.url, 1, { profile: true });
    const clients = {
      platform: await connectChat(plain.urls[0], { token: plain.token, sendHistory: "last" }),
      profile: await connectChat(shaped.urls[0], { token: shaped.token, sendHistory: "last" }),
      baseline: await connectChat(`${bare.url}/agents/bare-chat-agent/bench-${Date.now()}`, {
        sendHistory: "last",
      }),
    };
    const samples = Object.fromEntries(KINDS.map((kind) => [kind, { first: [], total: [] }]));
    for (let i = 0; i < turns + 10; i++) {
      // Each agent goes first, second and third in turn, so none always follows the same one.
      const order = KINDS.map((_, k) => KINDS[(i + k) % KINDS.length]);
      for (const kind of order) {
        const result = await clients[kind].send(`turn ${i} of the overhead benchmark`).done;
        if (result.error || result.firstTokenMs === null)
          throw new Error(`${kind} turn failed: ${result.error}`);
        if (i >= 10) {
          samples[kind].first.push(result.firstTokenMs);
          samples[kind].total.push(result.totalMs);
        }
      }
    }
    for (const client of Object.values(clients)) client.close();
    const s = Object.fromEntries(
      Object.entries(samples).map(([k, v]) => [
        k,
        { first: summarize(v.first), total: summarize(v.total) },
      ]),
    );
    const row = (label, kind, key) => {
      const p = s[kind][key];
      const b = s.baseline[key];
      const added = p.p50 - b.p50;
      const ratio = p.p50 / b.p50;
      const met = key === "first" ? added <= 2 && ratio <= 1.1 : ratio <= 1.0;
      return `| ${label} | ${ms(b.p50)} | ${ms(b.p99)} | ${ms(p.p50)} | ${ms(p.p99)} | ${ms(added)} | ${ratio.toFixed(2)} | ${met ? "met" : "MISSED"} |`;
    };
    return [
      "## Turn overhead (issues 8, 14 and 29)",
      "",
      `${turns} assistant turns on the platform (token, access, the profile and model resolved, the lease's`,
      "local draw, context window, metering) against the same number on a bare AIChatAgent",
      "(packages/chat-client/test/fixture: no auth, no billing), interleaved, all under wrangler dev (its local trace store off), dev",
      "model at zero latency, over WebSockets from Node. Two platform sessions: one on Parley's built-in",
      "assistant and the platform default model, one whose project runs a tenant's profile (1.5 KB of",
      "instructions, sampling, two tools) on another model (openai/gpt-4.1, which the dev model answers",
      "as parley/dev). Target (issue 29): time to first token at most 1.1x and at most 2 ms added at",
      "p50, with a non-default profile and model; whole turn at most 1.0x.",
      "",
      "| measure | bare p50 | bare p99 | platform p50 | platform p99 | added at p50 | ratio (p50) | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      row("time to first token, built-in assistant", "platform", "first"),
      row("time to first token, tenant's profile and model", "profile", "first"),
      row("whole turn, built-in assistant", "platform", "total"),
      row("whole turn, tenant's profile and model", "profile", "total"),
    ].join("\n");
  } finally {
    full.stop();
    bare.stop();
    await model.close();
  }
}

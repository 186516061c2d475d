// Turn overhead (issue 8, item 1): an assistant turn on the platform (token check, membership,
// reservation, context, settlement) against a bare AIChatAgent turn (no auth, no billing), both
// under wrangler dev, both answered by the dev model at zero latency, driven over real WebSockets
// from Node, interleaved in one run.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { startDevModel } from "../packages/dev-model/src/index.ts";
import { missingDevSecrets } from "../scripts/lib/dev-secrets.mjs";
import { ms, signUp, startWorker, summarize, wranglerRun } from "./lib.mjs";

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
  return startWorker(config, {
    vars: { MODEL_BASE_URL: modelUrl, MODEL_ID: "parley/dev", ...vars },
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
}

/**
 * A member with a funded org, a project and `count` assistant sessions; returns their chat URLs and
 * the token.
 */
export async function assistantSessions(base, count = 1) {
  const { token, orgId, post } = await signUp(base, "bench");
  const project = await post(`/api/orgs/${orgId}/projects`, { name: "Bench" });
  const urls = [];
  for (let i = 0; i < count; i++) {
    const session = await post(`/api/projects/${project.id}/sessions`, {});
    urls.push(`${base}/agents/assistant-agent/${session.id}`);
  }
  return { urls, token };
}

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
    const { urls, token } = await assistantSessions(full.url);
    const clients = {
      platform: await connectChat(urls[0], { token, sendHistory: "last" }),
      baseline: await connectChat(`${bare.url}/agents/bare-chat-agent/bench-${Date.now()}`, {
        sendHistory: "last",
      }),
    };
    const samples = { platform: { first: [], total: [] }, baseline: { first: [], total: [] } };
    for (let i = 0; i < turns + 10; i++) {
      for (const kind of i % 2 === 0 ? ["platform", "baseline"] : ["baseline", "platform"]) {
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
    const row = (label, key) => {
      const p = s.platform[key];
      const b = s.baseline[key];
      const added = p.p50 - b.p50;
      const ratio = p.p50 / b.p50;
      const met = key === "first" ? added <= 3 && ratio <= 1.2 : ratio <= 1.1;
      return `| ${label} | ${ms(b.p50)} | ${ms(b.p99)} | ${ms(p.p50)} | ${ms(p.p99)} | ${ms(added)} | ${ratio.toFixed(2)} | ${met ? "met" : "MISSED"} |`;
    };
    return [
      "## Turn overhead (issues 8 and 14)",
      "",
      `${turns} assistant turns on the platform (token, access, the lease's local draw, context window, metering)`,
      "against the same number on a bare AIChatAgent (packages/chat-client/test/fixture: no auth, no",
      "billing), interleaved, both under wrangler dev, dev model at zero latency, over WebSockets from Node.",
      "Target (issue 14): time to first token at most 1.2x and at most 3 ms added at p50; whole turn at",
      "most 1.1x.",
      "",
      "| measure | bare p50 | bare p99 | platform p50 | platform p99 | added at p50 | ratio (p50) | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      row("time to first token", "first"),
      row("whole turn", "total"),
    ].join("\n");
  } finally {
    full.stop();
    bare.stop();
    await model.close();
  }
}

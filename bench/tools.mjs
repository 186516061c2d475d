// Tool calls (issue 30): the time Parley adds to a tool call over calling the MCP server directly.
// The example shop's MCP server (examples/host-app/mcp-server.mjs, the official SDK, streamable
// HTTP) runs on a loopback port with its token check replaced by a constant, so both paths ask the
// server for the same work. From inside one session's chat object (bench/tools-worker.ts), each
// call goes either through `sourceTools`' execute (identity token signed, the source's client
// object, the guarded fetch, the result framed as data, the call noted closed in the chat object's
// SQLite; its settlement and record follow in a round of their own, with the other calls closed
// by then: a turn's end, or the durable schedule within 2 s) or through the agents SDK's MCP client of the same object directly; both are timed
// from Node, one call per request, in rotation, so the request into the Worker costs each the same.
// A third path, the source's client object alone (no ledger, record or framing), splits the time.
// The shop's own check of Parley's token (jose, ES256) is timed apart, in Node.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { parleyVerifier, shopMcpHandler, shopOrders } from "../examples/host-app/mcp-server.mjs";
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  SignJWT,
} from "../examples/host-app/node_modules/jose/dist/webapi/index.js";
import { ms, signUp, startModelProcess, summarize } from "./lib.mjs";
import { platform } from "./turns.mjs";

const SAMPLES = Number(process.env.BENCH_TOOL_SAMPLES ?? 300);
const WARMUP = 40;
const root = path.resolve(import.meta.dirname, "..");
/** HTTP requests the shop's server received (a call should be one). */
let requests = 0;

async function shopServer() {
  const handler = shopMcpHandler({
    verify: async () => ({ sub: "shop-user-bench", kind: "end_user" }),
    orders: shopOrders(),
  });
  const server = createServer((req, res) => {
    requests++;
    void handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, close: () => server.close() };
}

/** What the shop's check of one token costs it: jose's ES256 verify, with the keys at hand. */
async function verifyCost() {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k", alg: "ES256" };
  const verify = parleyVerifier({
    keys: createLocalJWKSet({ keys: [jwk] }),
    issuer: "parley",
    audience: "http://shop/mcp",
    org: "org_x",
  });
  const token = await new SignJWT({ kind: "end_user", org: "org_x" })
    .setProtectedHeader({ alg: "ES256", kid: "k", typ: "parley-tool+jwt" })
    .setSubject("shop-user-bench")
    .setIssuer("parley")
    .setAudience("http://shop/mcp")
    .setIssuedAt()
    .setExpirationTime("60s")
    .setJti(crypto.randomUUID())
    .sign(privateKey);
  const times = [];
  for (let i = 0; i < 1000; i++) {
    const t = performance.now();
    await verify(`Bearer ${token}`);
    times.push(performance.now() - t);
  }
  return summarize(times);
}

export async function benchTools() {
  const config = path.join(root, ".bench-tools.jsonc");
  writeFileSync(
    config,
    readFileSync(path.join(root, "wrangler.jsonc"), "utf8")
      .replace('"main": "apps/worker/src/index.ts"', '"main": "bench/tools-worker.ts"')
      // No web app here: the benchmark needs no assets (and no web build before it).
      .replace(/"assets": \{[^}]*\},/s, ""),
  );
  const shop = await shopServer();
  const model = await startModelProcess({ latencyMs: 0, tokensPerSecond: 0 });
  const full = await platform(model.url, { TOOL_SOURCES_ALLOW_PRIVATE: "*" }, { config });
  try {
    const base = full.url;
    const { orgId, post, token } = await signUp(base, "tools");
    const me = await (
      await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${token}` } })
    ).json();
    const project = await post(`/api/orgs/${orgId}/projects`, { name: "Tools" });
    const session = await post(`/api/projects/${project.id}/sessions`, {});
    const source = await post(`/api/orgs/${orgId}/tool-sources`, {
      kind: "mcp",
      name: "Bench shop",
      url: shop.url,
    });
    const tool = source.tools.find((t) => t.name === "order_status");
    if (!tool) throw new Error(`the shop listed ${JSON.stringify(source.tools)}`);
    const input = {
      session: session.id,
      orgId,
      projectId: project.id,
      userId: me.id,
      ref: tool.ref,
      tool: "order_status",
      url: shop.url,
      args: { orderId: "1001" },
    };
    const once = async (mode) => {
      const before = requests;
      const t = performance.now();
      const res = await fetch(`${base}/api/__bench/tool-call`, {
        method: "POST",
        body: JSON.stringify({ ...input, mode }),
      });
      if (res.status !== 204) throw new Error(`${mode}: ${res.status} ${await res.text()}`);
      const took = performance.now() - t;
      if (process.env.BENCH_TOOL_DEBUG) console.log(mode, took.toFixed(1), requests - before);
      return took;
    };
    const modes = ["direct", "parley", "client", "unsettled"];
    for (let i = 0; i < WARMUP; i++) for (const mode of modes) await once(mode);
    const times = { direct: [], parley: [], client: [], unsettled: [] };
    for (let i = 0; i < SAMPLES; i++) {
      // Rotating which goes first, so drift and caches cost each alike.
      for (let k = 0; k < modes.length; k++) {
        const mode = modes[(i + k) % modes.length];
        times[mode].push(await once(mode));
      }
    }
    const p = summarize(times.parley);
    const d = summarize(times.direct);
    const c = summarize(times.client);
    const u = summarize(times.unsettled);
    const verify = await verifyCost();
    const added = p.p50 - d.p50;
    const row = (name, s) => `| ${name} | ${s.n} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} |`;
    return [
      "## Tool calls (`pnpm bench tools`)",
      "",
      "The time Parley adds to one MCP tool call over calling the server directly (issue 30): the",
      "example shop's MCP server (`order_status`) on loopback, called from one session's chat object",
      "through `sourceTools`' execute (identity token, the source's client object, URL rule, no",
      "redirects, size cap, result framed as data; the call noted closed in the chat object's SQLite,",
      "its settlement and D1 record left to the next round, which takes every call closed by then:",
      "a turn's end, or the durable schedule within 2 s; here, with no turn, the schedule) or",
      "through the agents SDK's MCP client directly; and, to show where the time goes, through the",
      "source's client object alone, and through Parley with the settlement and record left out.",
      "Timed from Node, one call per request, the four in rotation.",
      "Target: at most 5 ms at p50.",
      "",
      "| path | calls | p50 | p90 | p99 |",
      "|---|---|---|---|---|",
      row("through Parley", p),
      row("through Parley, settlement and record left out", u),
      row("the source's client object only", c),
      row("direct (SDK client)", d),
      "",
      `Parley adds **${ms(added)} at p50** (${ms(p.p90 - d.p90)} at p90): ${added <= 5 ? "within" : "OVER"} the 5 ms target.`,
      `Of that, the source's client object (the RPC to it, the identity token, the URL rule and guarded fetch) is ${ms(c.p50 - d.p50)} at p50, and the turn's side without the settlement and record (the call's row in the chat object's SQLite before it goes out, the result framed) brings it to ${ms(u.p50 - d.p50)}. The rest is what closing the call costs on its path (its row marked closed, the round's schedule armed once per round); the settlement and record run in their round, in the same local process as the calls, so they show in the tail (p90, p99), not at p50.`,
      `Load average when it ended: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")} (${os.cpus().length} cores).`,
      `The shop's own check of the token (jose ES256 verify, keys cached) costs it ${ms(verify.p50)} at p50.`,
    ].join("\n");
  } finally {
    full.stop();
    model.stop();
    shop.close();
    rmSync(config, { force: true });
  }
}

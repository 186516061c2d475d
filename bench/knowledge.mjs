// Knowledge (issue 31, docs/2026-12-06-knowledge.md): retrieval quality on a corpus Parley did not
// write (the AI SDK's own docs, bench/knowledge-corpus) with the questions in
// bench/knowledge-questions.json (recall@5, MRR), measured through the platform's search route
// under wrangler dev; the same code offline in Node's SQLite (FTS5) with deliberately wrong
// chunking and ranking, to show the figures move; what the relevance floor leaves of unrelated
// messages; search latency over 10,000 passages; ingestion throughput (Markdown and PDF pages a
// second, upload to searchable); the time to first token a turn with retrieval adds.
import { readdirSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  BM25_WEIGHTS,
  chunkSections,
  FTS_TOKENIZE,
  ftsQuery,
} from "../apps/worker/src/knowledge/chunk.ts";
import { markdownSections } from "../apps/worker/src/knowledge/markdown.ts";
import { aboveFloor, ROWS_MATCHING_SQL } from "../apps/worker/src/knowledge/relevance.ts";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { startDevModel } from "../packages/dev-model/src/index.ts";
import { json, ms, signUp, summarize } from "./lib.mjs";
import { platform } from "./turns.mjs";

const root = path.resolve(import.meta.dirname, "..");
const corpusDir = path.join(root, "bench/knowledge-corpus/ai-sdk-docs");
/** A "page" of text for throughput: 3,000 characters, about a printed page. */
const PAGE_CHARS = 3000;
const K = 5;
/** Turns per session for the time to first token, after a few to warm up. */
const TTFT_TURNS = 40;
const TTFT_WARMUP = 5;

function corpus() {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(".mdx") || name.endsWith(".md")) {
        files.push({ name: path.relative(corpusDir, full), text: readFileSync(full, "utf8") });
      }
    }
  };
  walk(corpusDir);
  return files;
}

const questionSet = () =>
  JSON.parse(readFileSync(path.join(root, "bench/knowledge-questions.json"), "utf8"));
const questions = () => questionSet().questions;
/** Greetings and small talk no passage answers (the relevance floor should find nothing). */
const unrelated = () => questionSet().unrelated;

const norm = (s) => s.toLowerCase().replaceAll("`", "").replaceAll("()", "");
const correct = (question, hit) =>
  hit.documentName === question.document &&
  (question.heading === undefined || norm(hit.heading).includes(norm(question.heading)));

/** recall@K (a right passage among the first K) and MRR (1 / rank of the first right one). */
function score(results) {
  let found = 0;
  let reciprocal = 0;
  for (const { question, hits } of results) {
    const rank = hits.slice(0, K).findIndex((hit) => correct(question, hit));
    if (rank >= 0) {
      found++;
      reciprocal += 1 / (rank + 1);
    }
  }
  return { recall: found / results.length, mrr: reciprocal / results.length };
}

/**
 * The index as the Worker builds it, in Node's SQLite; `variant` changes one thing. Ranked as
 * the Worker ranks (the best `2K + 8` rows by BM25), then the relevance floor (relevance.ts, the
 * Worker's code), then the first K. Answers a search function over the same index.
 */
function offlineIndex(files, variant) {
  const db = new DatabaseSync(":memory:");
  db.exec(
    `CREATE VIRTUAL TABLE kb_fts USING fts5(heading, body, doc UNINDEXED, tokenize = '${FTS_TOKENIZE}')`,
  );
  const insert = db.prepare("INSERT INTO kb_fts (heading, body, doc) VALUES (?, ?, ?)");
  for (const file of files) {
    let extracted = markdownSections(file.text);
    let options;
    if (variant === "no-headings") {
      // Wrong chunking: the text cut in fixed windows, blind to its headings.
      extracted = {
        text: file.text,
        sections: [{ headings: [], start: 0, end: file.text.length }],
      };
    }
    if (variant === "tiny-chunks") options = { target: 150, max: 200, overlap: 0 };
    for (const chunk of chunkSections(extracted, options))
      insert.run(chunk.heading, chunk.text, file.name);
  }
  const weights = BM25_WEIGHTS.join(", ");
  // Wrong ranking: the worst BM25 match first.
  const order = variant === "reversed-ranking" ? "DESC" : "ASC";
  const rank = db.prepare(
    `SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? ORDER BY bm25(kb_fts, ${weights}) ${order} LIMIT ${K * 2 + 8}`,
  );
  const matching = db.prepare(ROWS_MATCHING_SQL);
  const read = db.prepare("SELECT heading, doc FROM kb_fts WHERE rowid = ?");
  return (q) => {
    const match = ftsQuery(q);
    if (match === null) return [];
    const ranked = rank.all(match).map((row) => Number(row.rowid));
    // `no-floor`: the ranking as it was before the relevance floor.
    const kept =
      variant === "no-floor"
        ? ranked
        : aboveFloor(ranked, q, (phrase, rows) =>
            matching.all(phrase, JSON.stringify(rows)).map((row) => Number(row.rowid)),
          );
    return kept.slice(0, K).map((rowid) => {
      const row = read.get(rowid);
      return { heading: row.heading, documentName: row.doc };
    });
  };
}

function offline(files, variant) {
  const search = offlineIndex(files, variant);
  return questions().map((question) => ({ question, hits: search(question.q) }));
}

/** How many of the unrelated messages find at least one passage. */
const retrievingUnrelated = (search) => unrelated().filter((m) => search(m).length > 0);

async function waitReady(base, auth, ids) {
  const pending = new Set(ids);
  const deadline = Date.now() + 600_000;
  while (pending.size > 0) {
    if (Date.now() > deadline) throw new Error(`${pending.size} documents not indexed in time`);
    for (const id of [...pending]) {
      const doc = await json(`${base}/api/documents/${id}`, { headers: auth });
      if (doc.indexing.status === "failed")
        throw new Error(`indexing failed: ${doc.indexing.error}`);
      if (doc.indexing.status === "ready" && doc.indexing.version === doc.version)
        pending.delete(id);
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 50));
  }
}

async function upload(base, auth, projectId, name, body, contentType) {
  const res = await fetch(
    `${base}/api/projects/${projectId}/documents?name=${encodeURIComponent(name)}`,
    { method: "POST", headers: { ...auth, "content-type": contentType }, body },
  );
  if (res.status !== 201) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

/**
 * 10,000 sections of the corpus's own sentences (eight each, seeded): passages that read like the
 * docs, none alike, about one passage a section.
 */
function synthetic(files, count, seed = 7) {
  const sentences = files
    .flatMap((f) => f.text.split(/(?<=[.!?])\s+|\n{2,}/))
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter((s) => s.length > 40 && !s.includes("```") && !s.startsWith("#"));
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
  return Array.from({ length: count }, (_, i) => {
    const body = Array.from({ length: 8 }, () => sentences[next() % sentences.length]).join(" ");
    return `## Topic ${i}\n\n${body.slice(0, 1150)}\n`;
  });
}

/**
 * The index's own time for the same queries over the same 10,000 passages, in Node's SQLite with
 * the Worker's statements (the ranking by rowid, the relevance floor, then the passages): what
 * the HTTP figure spends in FTS5, without the request, the token, the membership read and the
 * object's RPC.
 */
function offlineLatency(sections) {
  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE VIRTUAL TABLE kb_fts USING fts5(heading, body, tokenize = '${FTS_TOKENIZE}')`);
  const insert = db.prepare("INSERT INTO kb_fts (heading, body) VALUES (?, ?)");
  let passages = 0;
  for (const section of sections) {
    for (const chunk of chunkSections(markdownSections(section))) {
      insert.run(chunk.heading, chunk.text);
      passages++;
    }
  }
  const rank = db.prepare(
    `SELECT rowid FROM kb_fts WHERE kb_fts MATCH ? ORDER BY bm25(kb_fts, ${BM25_WEIGHTS.join(", ")}) LIMIT 18`,
  );
  const read = db.prepare(
    "SELECT rowid, heading, body FROM kb_fts WHERE rowid IN (SELECT value FROM json_each(?))",
  );
  const matching = db.prepare(ROWS_MATCHING_SQL);
  const samples = [];
  const qs = questions();
  for (let i = 0; i < 300; i++) {
    const t0 = performance.now();
    const q = qs[i % qs.length].q;
    const ranked = rank.all(ftsQuery(q)).map((row) => Number(row.rowid));
    // The relevance floor: one statement per search word over the ranked rows.
    const rows = aboveFloor(ranked, q, (phrase, candidates) =>
      matching.all(phrase, JSON.stringify(candidates)).map((row) => Number(row.rowid)),
    );
    read.all(JSON.stringify(rows));
    if (i >= 20) samples.push(performance.now() - t0);
  }
  return { passages, latency: summarize(samples) };
}

/**
 * The time to first token a turn with retrieval before its first call adds (issue 31's figure),
 * side by side in one run: two sessions of one member, each on a project whose default profile
 * is the same (no tools, the default model) but for `knowledgeRetrieval`, on for the corpus's
 * project; the same questions to both, turns interleaved, each session first every other turn.
 * Answers the samples and how many retrieval turns cited a passage (proof that it searched).
 */
async function retrievalTurns(base, user, docsProjectId) {
  const send = (method, p, body) =>
    json(`${base}${p}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${user.token}` },
      body: JSON.stringify(body),
    });
  const plain = await user.post(`/api/orgs/${user.orgId}/projects`, { name: "No documents" });
  const profile = (name, knowledgeRetrieval) =>
    user.post(`/api/orgs/${user.orgId}/profiles`, { name, tools: [], knowledgeRetrieval });
  const on = await profile("Docs with retrieval", true);
  const off = await profile("Docs without retrieval", false);
  await send("PATCH", `/api/projects/${docsProjectId}`, { defaultProfileId: on.id });
  await send("PATCH", `/api/projects/${plain.id}`, { defaultProfileId: off.id });
  const chat = async (projectId) => {
    const session = await user.post(`/api/projects/${projectId}/sessions`, {});
    return connectChat(`${base}/agents/assistant-agent/${session.id}`, {
      token: user.token,
      sendHistory: "last",
    });
  };
  const clients = { with: await chat(docsProjectId), without: await chat(plain.id) };
  const samples = { with: [], without: [] };
  let cited = 0;
  const qs = questions();
  for (let i = 0; i < TTFT_TURNS + TTFT_WARMUP; i++) {
    const order = i % 2 === 0 ? ["with", "without"] : ["without", "with"];
    for (const kind of order) {
      const result = await clients[kind].send(qs[i % qs.length].q).done;
      if (result.error || result.firstTokenMs === null)
        throw new Error(`${kind} retrieval turn failed: ${result.error}`);
      if (i < TTFT_WARMUP) continue;
      samples[kind].push(result.firstTokenMs);
      if (kind === "with" && (result.messageMetadata?.citations?.length ?? 0) > 0) cited++;
    }
  }
  for (const client of Object.values(clients)) client.close();
  return { with: summarize(samples.with), without: summarize(samples.without), cited };
}

export async function benchKnowledge() {
  const files = corpus();
  const model = await startDevModel({ port: 0 });
  const server = await platform(model.url, { KNOWLEDGE_QUOTA_BYTES: String(2 ** 30) });
  try {
    const base = server.url;
    const user = await signUp(base, "knowledge");
    const auth = { authorization: `Bearer ${user.token}` };
    const docs = await user.post(`/api/orgs/${user.orgId}/projects`, { name: "AI SDK docs" });

    // Ingestion of the corpus, Markdown: from the first upload to the last document searchable.
    const chars = files.reduce((sum, f) => sum + f.text.length, 0);
    let started = performance.now();
    const ids = [];
    for (const file of files) {
      ids.push(await upload(base, auth, docs.id, file.name, file.text, "text/markdown"));
    }
    await waitReady(base, auth, ids);
    const markdownSeconds = (performance.now() - started) / 1000;

    // Quality through the platform's search route.
    const served = [];
    for (const question of questions()) {
      const res = await json(
        `${base}/api/projects/${docs.id}/knowledge/search?q=${encodeURIComponent(question.q)}&limit=${K}`,
        { headers: auth },
      );
      served.push({ question, hits: res.items });
    }
    const platformScore = score(served);
    const variants = ["baseline", "no-floor", "tiny-chunks", "no-headings", "reversed-ranking"].map(
      (v) => ({ variant: v, ...score(offline(files, v)) }),
    );
    // Unrelated messages (greetings, small talk): what the relevance floor leaves them.
    const platformUnrelated = [];
    for (const message of unrelated()) {
      const res = await json(
        `${base}/api/projects/${docs.id}/knowledge/search?q=${encodeURIComponent(message)}&limit=${K}`,
        { headers: auth },
      );
      if (res.items.length > 0) platformUnrelated.push(message);
    }
    const withoutFloor = retrievingUnrelated(offlineIndex(files, "no-floor"));
    const withFloor = retrievingUnrelated(offlineIndex(files, "baseline"));

    // Time to first token with retrieval before the first call, against without.
    const loadBefore = os.loadavg()[0];
    const ttft = await retrievalTurns(base, user, docs.id);
    const loadAfter = os.loadavg()[0];

    // PDF ingestion: the test fixture (2 pages, made by Ghostscript) uploaded 20 times.
    const pdf = readFileSync(path.join(root, "apps/worker/test/fixtures/knowledge/handbook.pdf"));
    const pdfProject = await user.post(`/api/orgs/${user.orgId}/projects`, { name: "PDFs" });
    started = performance.now();
    const pdfIds = [];
    for (let i = 0; i < 20; i++) {
      pdfIds.push(
        await upload(base, auth, pdfProject.id, `handbook-${i}.pdf`, pdf, "application/pdf"),
      );
    }
    await waitReady(base, auth, pdfIds);
    const pdfSeconds = (performance.now() - started) / 1000;

    // Search over 10,000 passages: 20 documents of 500 one-passage sections.
    const big = await user.post(`/api/orgs/${user.orgId}/projects`, { name: "Big" });
    const sections = synthetic(files, 10_000);
    const bigIds = [];
    for (let d = 0; d < 20; d++) {
      const text = `# Part ${d}\n\n${sections.slice(d * 500, (d + 1) * 500).join("\n")}`;
      bigIds.push(await upload(base, auth, big.id, `part-${d}.md`, text, "text/markdown"));
    }
    await waitReady(base, auth, bigIds);
    const passages = (
      await Promise.all(bigIds.map((id) => json(`${base}/api/documents/${id}`, { headers: auth })))
    ).reduce((sum, doc) => sum + doc.indexing.total, 0);
    const latencies = [];
    const bare = [];
    const qs = questions();
    for (let i = 0; i < 300; i++) {
      const q = qs[i % qs.length].q;
      let t0 = performance.now();
      await json(
        `${base}/api/projects/${big.id}/knowledge/search?q=${encodeURIComponent(q)}&limit=5`,
        { headers: auth },
      );
      if (i >= 20) latencies.push(performance.now() - t0);
      // The same request's cost without the search: an authorized read of the project.
      t0 = performance.now();
      await json(`${base}/api/projects/${big.id}`, { headers: auth });
      if (i >= 20) bare.push(performance.now() - t0);
    }
    const latency = summarize(latencies);
    const bareLatency = summarize(bare);
    const index = offlineLatency(sections);

    const pct = (x) => `${(x * 100).toFixed(1)}%`;
    return [
      "## Knowledge retrieval",
      "",
      `Corpus: ${files.length} Markdown pages of the AI SDK's documentation (bench/knowledge-corpus, Apache-2.0), ${chars.toLocaleString("en")} characters; ${questions().length} questions (bench/knowledge-questions.json). A question is answered when one of the first ${K} passages is from its document and, where it names one, under its heading.`,
      "",
      "| retrieval | recall@5 | MRR |",
      "| --- | --- | --- |",
      `| the platform (search route, wrangler dev) | ${pct(platformScore.recall)} | ${platformScore.mrr.toFixed(3)} |`,
      ...variants.map((v) => `| offline, ${v.variant} | ${pct(v.recall)} | ${v.mrr.toFixed(3)} |`),
      "",
      "Offline is the same chunker, tokenizer, query, BM25 weights and relevance floor in Node's SQLite (FTS5): `baseline` must match the platform; `no-floor` is the ranking without the relevance floor (a passage must hold two of the question's search words: apps/worker/src/knowledge/relevance.ts); `tiny-chunks` (150-200 characters, no overlap), `no-headings` (fixed windows blind to headings) and `reversed-ranking` (worst BM25 first) are deliberately wrong: recall@5 falls with each (tiny passages raise MRR: docs/2026-12-06-knowledge.md says why that is no gain).",
      "",
      `| ${unrelated().length} unrelated messages (greetings, small talk: bench/knowledge-questions.json \`unrelated\`) | finding a passage |`,
      "| --- | --- |",
      `| the platform (search route, with the relevance floor) | ${platformUnrelated.length} |`,
      `| offline, with the floor | ${withFloor.length} |`,
      `| offline, without the floor | ${withoutFloor.length} |`,
      "",
      `Still finding one with the floor: ${withFloor.map((m) => JSON.stringify(m)).join(", ") || "none"}.`,
      "",
      "| ingestion (upload to searchable) | figure |",
      "| --- | --- |",
      `| Markdown: ${files.length} documents, ${(chars / PAGE_CHARS).toFixed(0)} pages of ${PAGE_CHARS} characters | ${markdownSeconds.toFixed(1)} s, ${(chars / PAGE_CHARS / markdownSeconds).toFixed(1)} pages/s |`,
      `| PDF: 20 uploads of a 2-page PDF (40 pages) | ${pdfSeconds.toFixed(1)} s, ${(40 / pdfSeconds).toFixed(1)} pages/s |`,
      "",
      "| search over 10,000 passages, 280 queries one at a time | p50 | p90 | p99 |",
      "| --- | --- | --- | --- |",
      `| the search route, the whole HTTP request under wrangler dev (${passages.toLocaleString("en")} passages in 20 documents) | ${ms(latency.p50)} | ${ms(latency.p90)} | ${ms(latency.p99)} |`,
      `| an authorized read of the project, interleaved (what every request pays before the search) | ${ms(bareLatency.p50)} | ${ms(bareLatency.p90)} | ${ms(bareLatency.p99)} |`,
      `| the index alone: the same statements in Node's SQLite (${index.passages.toLocaleString("en")} passages) | ${ms(index.latency.p50)} | ${ms(index.latency.p90)} | ${ms(index.latency.p99)} |`,
      "",
      `| time to first token, ${TTFT_TURNS} turns each, interleaved (after ${TTFT_WARMUP} to warm up) | p50 | p90 | p99 |`,
      "| --- | --- | --- | --- |",
      `| without retrieval (the same profile, \`knowledgeRetrieval\` off) | ${ms(ttft.without.p50)} | ${ms(ttft.without.p90)} | ${ms(ttft.without.p99)} |`,
      `| with retrieval before the first call (${ttft.cited} of ${TTFT_TURNS} replies cited passages) | ${ms(ttft.with.p50)} | ${ms(ttft.with.p90)} | ${ms(ttft.with.p99)} |`,
      `| added at p50 | ${ms(ttft.with.p50 - ttft.without.p50)} (${(ttft.with.p50 / ttft.without.p50).toFixed(2)}x) | | |`,
      "",
      `Both sessions are one member's, under wrangler dev, answered by the dev model at zero latency; the questions are the quality set's, asked of both. With retrieval the turn searches the corpus's passages before its first call and its prompt carries up to five passages (about 6 KB more for the model to read). Load average (1 minute) of this 2-core machine, shared with other work: ${loadBefore.toFixed(1)} as the turns began, ${loadAfter.toFixed(1)} as they ended.`,
    ].join("\n");
  } finally {
    server.stop();
    await model.close();
  }
}

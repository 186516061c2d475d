import { env, runInDurableObject } from "cloudflare:test";
import { AppError } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { chunkSections } from "../src/knowledge/chunk.ts";
import {
  bindingBackend,
  chargeEmbedding,
  type EmbeddingSide,
} from "../src/knowledge/embeddings.ts";
import { markdownSections } from "../src/knowledge/extract.ts";
import { KnowledgeStore } from "../src/knowledge/store.ts";
import { knowledgeBase } from "./knowledge.ts";
import { funded } from "./metering.ts";

/**
 * The embedding path (docs/2026-12-06-knowledge.md, "Embeddings"). Workers AI and Vectorize are
 * bindings, not HTTP endpoints: the stand-ins here are objects of the bindings' own shapes
 * (`Ai.run`, `VectorizeIndex.upsert/query/deleteByIds`), handed to the production adapter
 * (`bindingBackend`), which is the boundary. The index under test is the real one, in a real
 * KnowledgeBase's SQLite, and usage lands in the org's real BillingAccount.
 */

/** Words that mean the same to the stand-in model: a vector is a count of concepts. */
const CONCEPTS = [
  ["refund", "refunds", "reimbursement", "reimbursed", "money", "back"],
  ["ship", "shipping", "parcel", "parcels", "delivery", "deliveries"],
  ["password", "passwords", "login", "credentials"],
];

function standIns() {
  const calls = { embed: 0, texts: 0 };
  const vectors = new Map<string, { values: number[]; namespace: string }>();
  const ai = {
    run: async (model: string, input: { text: string[] }) => {
      expect(model).toBe("@cf/baai/bge-base-en-v1.5");
      calls.embed++;
      calls.texts += input.text.length;
      return {
        shape: [input.text.length, CONCEPTS.length],
        data: input.text.map((text) => {
          const words = text.toLowerCase().split(/\W+/);
          return CONCEPTS.map((group) => words.filter((w) => group.includes(w)).length + 0.01);
        }),
      };
    },
  };
  const index = {
    upsert: async (items: { id: string; values: number[]; namespace: string }[]) => {
      for (const item of items) vectors.set(item.id, item);
      return { ids: items.map((i) => i.id), count: items.length };
    },
    query: async (vector: number[], options: { topK: number; namespace: string }) => {
      const norm = (v: number[]) => Math.hypot(...v);
      const matches = [...vectors.entries()]
        .filter(([, v]) => v.namespace === options.namespace)
        .map(([id, v]) => ({
          id,
          score:
            v.values.reduce((sum, x, i) => sum + x * (vector[i] ?? 0), 0) /
            (norm(v.values) * norm(vector)),
        }))
        .sort((a, b) => b.score - a.score)
        .slice(0, options.topK);
      return { matches, count: matches.length };
    },
    deleteByIds: async (ids: string[]) => {
      for (const id of ids) vectors.delete(id);
      return { ids, count: ids.length };
    },
  };
  const backend = bindingBackend({ ...env, AI: ai, KNOWLEDGE_VECTORS: index } as unknown as Env);
  if (!backend) throw new Error("the adapter took the stand-ins for missing bindings");
  return { backend, calls, vectors };
}

const DOC = `# Help

## Money back

A refund is paid to the card used, within 30 days of the charge.

## Deliveries

Parcels leave the warehouse every Tuesday.

## Accounts

Passwords must be twelve characters long.
`;

describe("embeddings where the bindings are configured", () => {
  it("the adapter is off without both bindings (FTS5 alone, as here)", () => {
    expect(bindingBackend(env)).toBeNull();
  });

  it("indexes vectors in the project's namespace, fuses ranks, meters each batch once, forgets deleted passages", async () => {
    const w = await funded();
    const { backend, calls, vectors } = standIns();
    const namespace = w.projectId;
    const embedding: EmbeddingSide = {
      backend,
      namespace,
      charge: (input, run) =>
        chargeEmbedding(
          env,
          { ...input, orgId: w.orgId, projectId: w.projectId, model: backend.model },
          run,
        ),
    };
    const chunks = chunkSections(markdownSections(DOC));
    const found = await runInDurableObject(knowledgeBase(w.projectId), async (_i, state) => {
      const store = new KnowledgeStore(state.storage.sql, (fn) =>
        state.storage.transactionSync(fn),
      );
      store.stage({
        documentId: "doc_e1",
        version: 1,
        name: "help.md",
        text: DOC,
        chunks,
        memberId: w.owner.id,
      });
      while (await store.indexSlice(200, embedding)) {
        // all slices
      }
      const result = {
        lexical: store.lexical("reimbursement", 5),
        fused: await store.search("reimbursement", 5, embedding, w.owner.id),
        both: await store.search("how long is a password", 3, embedding, w.owner.id),
        vectorsBefore: vectors.size,
      };
      // A deletion answers its vectors' ids; the object deletes them (knowledge-base.ts).
      await backend.remove(store.remove("doc_e1", namespace));
      return result;
    });
    expect(found.vectorsBefore).toBe(chunks.length);
    expect(vectors.size).toBe(0);
    expect([...vectors.keys()].every((id) => id.startsWith(`${namespace}:`))).toBe(true);
    // "reimbursement" is no word of the document: BM25 finds nothing, the vectors find the refund.
    expect(found.lexical).toEqual([]);
    expect(found.fused[0]?.heading).toBe("Help › Money back");
    expect(found.both[0]?.heading).toBe("Help › Accounts");
    expect(calls.embed).toBeGreaterThanOrEqual(3);
    // The ledger: one usage per (document version, batch), and one per query.
    const usage = await runInDurableObject(billingAccount(env, w.orgId), (_i, state) =>
      state.storage.sql
        .exec(
          "SELECT request_id, price_micros, model, member_id FROM usage_events WHERE request_id LIKE 'kb-%' ORDER BY request_id",
        )
        .toArray(),
    );
    const keys = usage.map((row) => String(row.request_id));
    expect(keys.filter((k) => k === "kb-embed:doc_e1:v1:0")).toHaveLength(1);
    expect(keys.filter((k) => k.startsWith("kb-query:"))).toHaveLength(2);
    expect(usage.every((row) => row.model === "@cf/baai/bge-base-en-v1.5")).toBe(true);
    expect(usage.every((row) => Number(row.price_micros) >= 1)).toBe(true);
    // The same batch settled again (a slice run twice) charges nothing more.
    const entries = async () =>
      runInDurableObject(billingAccount(env, w.orgId), (_i, state) =>
        Number(
          state.storage.sql
            .exec("SELECT COUNT(*) AS n FROM ledger_entries WHERE reference LIKE 'kb-embed:%'")
            .one().n,
        ),
      );
    const before = await entries();
    let ran = false;
    await chargeEmbedding(
      env,
      {
        orgId: w.orgId,
        requestId: "kb-embed:doc_e1:v1:0",
        memberId: w.owner.id,
        projectId: w.projectId,
        tokens: 500,
        model: backend.model,
      },
      async () => {
        ran = true;
      },
    );
    expect(ran).toBe(true);
    expect(await entries()).toBe(before);
  });
});

describe("embeddings are paid for before they are made", () => {
  it("an org without credits gets no embedding: the slice fails with insufficient_credits, nothing charged", async () => {
    const w = await funded(0);
    const { backend, calls } = standIns();
    const embedding: EmbeddingSide = {
      backend,
      namespace: w.projectId,
      charge: (input, run) =>
        chargeEmbedding(
          env,
          { ...input, orgId: w.orgId, projectId: w.projectId, model: backend.model },
          run,
        ),
    };
    const outcome = await runInDurableObject(knowledgeBase(w.projectId), async (_i, state) => {
      const store = new KnowledgeStore(state.storage.sql, (fn) =>
        state.storage.transactionSync(fn),
      );
      const chunks = chunkSections(markdownSections(DOC));
      store.stage({
        documentId: "doc_e2",
        version: 1,
        name: "help.md",
        text: DOC,
        chunks,
        memberId: w.owner.id,
      });
      const refused = await store
        .indexSlice(200, embedding)
        .catch((error: { code?: string }) => error.code);
      // The query path falls back to BM25 rather than failing the search.
      const stillSearches = await store.search("refund", 3, embedding, w.owner.id);
      return { refused, indexed: store.indexing(["doc_e2"]).doc_e2?.done, stillSearches };
    });
    expect(outcome.refused).toBe("insufficient_credits");
    expect(outcome.indexed).toBe(0);
    expect(calls.embed).toBe(0);
    expect(outcome.stillSearches).toEqual([]);
  });
});

describe("a job that cannot go on", () => {
  it("says why in words every member may read: an AppError's message, never a raw error's text", async () => {
    const w = await funded(0);
    const outcome = await runInDurableObject(knowledgeBase(w.projectId), async (_i, state) => {
      const store = new KnowledgeStore(state.storage.sql, (fn) =>
        state.storage.transactionSync(fn),
      );
      const stage = (documentId: string) =>
        store.stage({
          documentId,
          version: 1,
          name: "help.md",
          text: DOC,
          chunks: chunkSections(markdownSections(DOC)),
          memberId: w.owner.id,
        });
      stage("doc_f1");
      store.failJob(
        new Error("D1_ERROR: vectorize-internal.cf-int:7443 refused (stack at /srv/x)"),
      );
      stage("doc_f2");
      store.failJob(new AppError("insufficient_credits", "The organization has no credits left"));
      return store.indexing(["doc_f1", "doc_f2"]);
    });
    expect(outcome.doc_f1?.status).toBe("failed");
    expect(outcome.doc_f1?.error).toMatch(/^Indexing failed/);
    expect(JSON.stringify(outcome)).not.toMatch(/D1_ERROR|cf-int|\/srv/);
    expect(outcome.doc_f2?.error).toBe("The organization has no credits left");
  });
});

import { applyMarkup } from "@parley/billing";
import { AppError } from "@parley/shared";
import { billingAccount } from "../billing/account.ts";
import { agentSettings } from "../env.ts";

/**
 * The optional embedding path (docs/2026-12-06-knowledge.md, "Embeddings"): where the Worker has
 * a Workers AI binding (`AI`) and a Vectorize index (`KNOWLEDGE_VECTORS`), passages are embedded
 * as they are indexed and a search fuses the vector ranks with BM25's. Neither binding is in
 * wrangler.jsonc: a deployment adds both (the README's Deploy), `pnpm dev` and the tests run
 * without them, and everything works on FTS5 alone.
 */

/** What the index needs of an embedding model and a vector store: the bindings' boundary. */
export interface EmbeddingBackend {
  /** The model's name, as the ledger records it. */
  readonly model: string;
  embed(texts: string[]): Promise<number[][]>;
  upsert(namespace: string, vectors: { id: string; values: number[] }[]): Promise<void>;
  query(
    namespace: string,
    vector: number[],
    topK: number,
  ): Promise<{ id: string; score: number }[]>;
  remove(ids: string[]): Promise<void>;
}

/** The embedding side of indexing: the backend and who pays (null: FTS5 alone). */
export interface EmbeddingSide {
  backend: EmbeddingBackend;
  /** The project's namespace in the vector index (vectors of other projects are never queried). */
  namespace: string;
  /** Runs an embedding call charged once per request id (`chargeEmbedding`). */
  charge<T>(
    input: { requestId: string; memberId: string; tokens: number },
    run: () => Promise<T>,
  ): Promise<T>;
}

/** Workers AI's BGE base model: 768 dimensions, English; the Vectorize index must match. */
export const EMBEDDING_MODEL = "@cf/baai/bge-base-en-v1.5";
/**
 * Its price, in micro-dollars per million input tokens ($0.067 on Workers AI's price list); the
 * org pays it with Parley's markup, like model calls.
 */
export const EMBEDDING_MICROS_PER_MTOK = 67_000;
/** Texts per Workers AI call (its batch limit for this model is 100). */
export const EMBED_BATCH = 50;

interface OptionalBindings {
  AI?: Ai;
  KNOWLEDGE_VECTORS?: VectorizeIndex;
}

/** The bindings as a backend, or null when either is missing (the FTS5-only path). */
export function bindingBackend(env: Env): EmbeddingBackend | null {
  const { AI: ai, KNOWLEDGE_VECTORS: index } = env as Env & OptionalBindings;
  if (!ai || !index) return null;
  return {
    model: EMBEDDING_MODEL,
    async embed(texts) {
      const out = (await ai.run(EMBEDDING_MODEL, { text: texts })) as { data?: number[][] };
      if (!out.data || out.data.length !== texts.length) {
        throw new Error("Workers AI answered without one vector per text");
      }
      return out.data;
    },
    async upsert(namespace, vectors) {
      await index.upsert(vectors.map((v) => ({ ...v, namespace })));
    },
    async query(namespace, vector, topK) {
      const found = await index.query(vector, { topK, namespace });
      return found.matches.map((m) => ({ id: m.id, score: m.score }));
    },
    async remove(ids) {
      for (let i = 0; i < ids.length; i += 1000) await index.deleteByIds(ids.slice(i, i + 1000));
    },
  };
}

/**
 * Tokens of the texts as the ledger counts them: Workers AI reports none for embeddings, so they
 * are estimated at 4 characters a token, rounded up per text (the same estimate the context
 * window uses), which never undercounts an English passage by much.
 */
export const embeddingTokens = (texts: readonly string[]) =>
  texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);

/**
 * Runs one embedding call charged to the org, exactly once per `requestId` (the ledger's
 * idempotency key; for indexing it names the document version and batch, so a slice run again
 * after a reset charges nothing twice). The price is known before the call (tokens are estimated
 * from the text), so it is reserved first, as a model call is: an org without the credits gets
 * `insufficient_credits` (or `spend_limit`) and no embedding is made for free. A key already
 * charged runs the call again without a second charge (the vectors of a slice cut short).
 */
export async function chargeEmbedding<T>(
  env: Env,
  input: {
    orgId: string;
    requestId: string;
    memberId: string;
    projectId: string;
    tokens: number;
    model: string;
  },
  run: () => Promise<T>,
): Promise<T> {
  const costMicros = Math.max(1, Math.ceil((input.tokens * EMBEDDING_MICROS_PER_MTOK) / 1_000_000));
  const priceMicros = applyMarkup(costMicros, agentSettings(env).prices.markupBps);
  const account = billingAccount(env, input.orgId);
  const reserved = await account.reserve({
    requestId: input.requestId,
    amountMicros: priceMicros,
    memberId: input.memberId,
    projectId: input.projectId,
    sessionId: null,
  });
  if (!reserved.ok && reserved.reason !== "conflict") {
    throw new AppError(
      reserved.reason,
      reserved.reason === "spend_limit"
        ? "A spending limit stops the documents' embeddings"
        : "Not enough credits for the documents' embeddings",
    );
  }
  let value: T;
  try {
    value = await run();
  } catch (error) {
    if (reserved.ok) await account.release(input.requestId);
    throw error;
  }
  if (reserved.ok) {
    const settled = await account.settle({
      requestId: input.requestId,
      costMicros,
      priceMicros,
      tokens: {
        promptTokens: input.tokens,
        completionTokens: 0,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      model: input.model,
      generationIds: [],
      billable: true,
    });
    if (!settled.ok) throw new Error(`the ledger refused the embedding's usage: ${settled.reason}`);
  }
  return value;
}

/**
 * Embeds a slice's passages and stores their vectors, metered once per batch of a version: the
 * batch's key is its first passage's place, so a slice run again after a reset charges nothing
 * twice.
 */
export async function embedPassages(
  documentId: string,
  version: number,
  memberId: string,
  rows: readonly { id: number; seq: number; heading: string; body: string }[],
  embedding: EmbeddingSide,
): Promise<void> {
  // Batches aligned on multiples of EMBED_BATCH, whatever the slice: a batch's key is stable.
  const batches = new Map<number, (typeof rows)[number][]>();
  for (const row of rows) {
    const start = row.seq - (row.seq % EMBED_BATCH);
    batches.set(start, [...(batches.get(start) ?? []), row]);
  }
  for (const [start, batch] of batches) {
    const texts = batch.map((row) => `${row.heading}\n${row.body}`);
    const request = {
      requestId: `kb-embed:${documentId}:v${version}:${start}`,
      memberId,
      tokens: embeddingTokens(texts),
    };
    await embedding.charge(request, async () => {
      const vectors = await embedding.backend.embed(texts);
      await embedding.backend.upsert(
        embedding.namespace,
        batch.map((row, i) => ({
          id: `${embedding.namespace}:${row.id}`,
          values: vectors[i] ?? [],
        })),
      );
    });
  }
}

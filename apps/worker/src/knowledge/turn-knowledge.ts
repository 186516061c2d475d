import type { Citation } from "@parley/shared";
import type { ToolSet, UIMessage } from "ai";
import { CHUNK_MAX_CHARS } from "./chunk.ts";
import {
  DATA_NOTE,
  DEFAULT_PASSAGES,
  knowledgeTool,
  retrieveForTurn,
  SEARCH_KNOWLEDGE,
} from "./tool.ts";

/**
 * Knowledge in one assistant turn (docs/2026-12-06-knowledge.md, "In the turn"): the
 * `search_knowledge` tool when the profile switches it on, retrieval before the first call when
 * the profile asks for it, and the citations the reply's metadata carries. Made at admission for
 * the session's project as the rights check read it (an end user's session is in their app's
 * project), so nothing the model or the chat body says chooses what is searched.
 */

/**
 * The most pre-turn retrieval may add to the first call's prompt, in tokens (4 characters a
 * token, as every estimate): the data note, then each passage at its largest with its frame,
 * document name and heading. Added to the first call's hold when the profile retrieves, so the
 * hold, sized before the search runs, still covers the prompt the model is sent.
 */
export const RETRIEVAL_PROMPT_TOKENS = Math.ceil(
  (DATA_NOTE.length + 200 + DEFAULT_PASSAGES * (CHUNK_MAX_CHARS + 600)) / 4,
);

/** The longest question a search is given (the tool's own limit). */
const MAX_QUERY_CHARS = 1000;

export interface TurnKnowledgeScope {
  orgId: string;
  /** The session's project: its documents are the only ones searched. */
  projectId: string;
  /** Who is asking (a member or an end user): a query's embedding is charged to them. */
  userId: string;
}

export class TurnKnowledge {
  readonly #env: Env;
  readonly #scope: TurnKnowledgeScope;
  /** Every passage the turn was given, in the order found, once each. */
  readonly #citations = new Map<string, Citation>();
  /** How long retrieval before the first call took (ms); null when it did not run. */
  retrievalMs: number | null = null;

  constructor(env: Env, scope: TurnKnowledgeScope) {
    this.#env = env;
    this.#scope = scope;
  }

  /** `search_knowledge` when the turn's tools name it (the resolver's list), else nothing. */
  tools(names: readonly string[]): ToolSet {
    if (!names.includes(SEARCH_KNOWLEDGE)) return {};
    return {
      [SEARCH_KNOWLEDGE]: knowledgeTool(this.#env, {
        orgId: this.#scope.orgId,
        projectId: this.#scope.projectId,
        caller: { userId: this.#scope.userId },
        onFound: (citations) => this.#cite(citations),
      }),
    };
  }

  /**
   * The system prompt with the passages found for the person's latest message after it, framed
   * as data (or, with none found, the instruction to say the documents do not cover it rather
   * than guess). A failed search does not fail the turn: the model is told the documents could
   * not be searched.
   */
  async withRetrieval(system: string, messages: readonly UIMessage[]): Promise<string> {
    const query = latestQuestion(messages);
    if (query === "") return system;
    let context: string;
    try {
      const retrieved = await retrieveForTurn(this.#env, {
        orgId: this.#scope.orgId,
        projectId: this.#scope.projectId,
        query,
        memberId: this.#scope.userId,
      });
      this.retrievalMs = retrieved.tookMs;
      this.#cite(retrieved.citations);
      context = retrieved.context;
    } catch (error) {
      // The cause only: never the question or a passage.
      console.error(
        JSON.stringify({
          level: "error",
          source: "knowledge-retrieval",
          error: error instanceof Error ? error.name : "unknown",
        }),
      );
      context = SEARCH_FAILED;
    }
    return `${system}\n\nThe project's documents, searched for the person's latest message before this reply:\n${context}`;
  }

  /** What the reply's metadata carries: its citations, when it was given any. */
  metadata(): { citations?: Citation[] } {
    return this.#citations.size === 0 ? {} : { citations: [...this.#citations.values()] };
  }

  #cite(citations: readonly Citation[]): void {
    for (const citation of citations) {
      const key = `${citation.documentId}:${citation.version}:${citation.chunkId}`;
      if (!this.#citations.has(key)) this.#citations.set(key, citation);
    }
  }
}

const SEARCH_FAILED =
  "The project's documents could not be searched just now. If the person asks about the product, its plans, settings or policies, tell them you cannot check the documents at the moment; do not guess an answer.";

/** The text of the newest message the person wrote, as the search's question. */
export function latestQuestion(messages: readonly UIMessage[]): string {
  const last = messages.findLast((message) => message.role === "user");
  const text = (last?.parts ?? [])
    .flatMap((part) => (part.type === "text" ? [part.text] : []))
    .join("\n")
    .trim();
  return text.slice(0, MAX_QUERY_CHARS);
}

import { AppError, type CitedPassage } from "@parley/shared";
import { notFound } from "../auth/access.ts";
import { knowledgeBase } from "./ingest.ts";
import { PASSAGE_ID } from "./passage.ts";

/**
 * A cited passage as the member's and the end user's passage routes answer it
 * (docs/2026-12-06-knowledge.md, "Opening a passage"), for a document the route has authorized:
 * 404 for a passage that is not this document's (another document's, another project's: their
 * ids are rows of another index), 410 when the citation names a version the document no longer
 * has. Reads the one passage from the project's object, not the document's text.
 */
export async function citedPassage(
  env: Env,
  document: { id: string; projectId: string },
  chunkId: string,
  version: number | undefined,
): Promise<CitedPassage> {
  // A passage id as citations name them; anything else cannot be one.
  if (!PASSAGE_ID.test(chunkId)) throw notFound("Passage");
  const found = await knowledgeBase(env, document.projectId).passage(document.id, chunkId);
  if (!found) throw notFound("Document");
  if (version !== undefined && version !== found.version) {
    throw new AppError(
      "gone",
      `Version ${version} was replaced: the document is at version ${found.version}`,
    );
  }
  if (!found.passage) throw notFound("Passage");
  return {
    documentId: document.id,
    documentName: found.name,
    version: found.version,
    chunkId,
    heading: found.passage.heading,
    text: found.passage.text,
  };
}

import {
  AppError,
  documentJsonUploadSchema,
  documentNameSchema,
  KNOWLEDGE_CONTENT_TYPES,
  type KnowledgeContentType,
  MAX_DOCUMENT_BYTES,
  newId,
} from "@parley/shared";
import type { Context } from "hono";
import { auditStatement } from "../db/audit.ts";
import type { AppEnv } from "../http/context.ts";
import { invalidRequest } from "../http/errors.ts";
import { chunkSections } from "./chunk.ts";
import {
  type DocumentRow,
  insertDocumentStatements,
  knowledgeQuota,
  quotaRefusal,
  replaceDocumentStatements,
  type VersionRow,
} from "./documents-db.ts";
import { extractDocument } from "./extract.ts";

/**
 * An upload, from the request to the project's index (docs/2026-12-06-knowledge.md, "Upload"):
 * read and size the body, extract and chunk its text (every refusal happens here, before any
 * write), then D1's rows under the quota in one batch, then the KnowledgeBase stages the version
 * and its alarm indexes it. A stage that fails undoes D1's write, so a refusal changes nothing.
 */

export interface Upload {
  name: string | undefined;
  contentType: KnowledgeContentType;
  bytes: Uint8Array;
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

/** The request's document: a raw body of a supported type, or the JSON form for text. */
export async function readUpload(c: Context<AppEnv>): Promise<Upload> {
  const header = c.req.header("content-type") ?? "";
  const [mediaType = "", ...params] = header.split(";").map((part) => part.trim());
  const charset = params
    .map((p) => p.split("="))
    .find(([key]) => key?.toLowerCase() === "charset")?.[1];
  if (charset && !/^"?utf-8"?$/i.test(charset)) {
    throw new AppError("invalid_request", "Text must be sent as UTF-8 (charset=utf-8)");
  }
  const body = new Uint8Array(await c.req.arrayBuffer());
  if (body.byteLength > MAX_DOCUMENT_BYTES) throw tooLarge();
  if (JSON_TYPE.test(mediaType)) {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
    } catch {
      throw new AppError("invalid_request", "The body is not valid JSON");
    }
    const parsed = documentJsonUploadSchema.safeParse(value);
    if (!parsed.success) throw invalidRequest(parsed.error);
    if (
      /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(
        parsed.data.text,
      )
    ) {
      throw new AppError("invalid_request", "text: must be valid Unicode (an unpaired surrogate)", {
        field: "text",
      });
    }
    const bytes = new TextEncoder().encode(parsed.data.text);
    if (bytes.byteLength > MAX_DOCUMENT_BYTES) throw tooLarge();
    return { name: parsed.data.name, contentType: parsed.data.contentType, bytes };
  }
  const type = mediaType.toLowerCase();
  if (!(KNOWLEDGE_CONTENT_TYPES as readonly string[]).includes(type)) {
    throw new AppError(
      "invalid_request",
      `Content-Type must be one of ${KNOWLEDGE_CONTENT_TYPES.join(", ")} (or application/json)`,
    );
  }
  if (body.byteLength === 0) throw new AppError("invalid_request", "The document is empty");
  const rawName = c.req.query("name");
  const unknown = Object.keys(c.req.queries()).filter((key) => key !== "name");
  if (unknown.length > 0) {
    throw new AppError("invalid_request", `query.${unknown[0]}: unknown parameter`, {
      field: `query.${unknown[0]}`,
    });
  }
  let name: string | undefined;
  if (rawName !== undefined) {
    const parsed = documentNameSchema.safeParse(rawName);
    if (!parsed.success) throw invalidRequest(parsed.error, "query.name");
    name = parsed.data;
  }
  return { name, contentType: type as KnowledgeContentType, bytes: body };
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

const tooLarge = () =>
  new AppError("payload_too_large", `A document must be at most ${MAX_DOCUMENT_BYTES} bytes`);

export const knowledgeBase = (env: Env, projectId: string) =>
  env.KNOWLEDGE_BASE.get(env.KNOWLEDGE_BASE.idFromName(projectId));

/** Extracts, then writes a new document (`previous` null) or a new version of `previous`. */
export async function ingest(
  env: Env,
  input: {
    orgId: string;
    projectId: string;
    userId: string;
    upload: Upload;
    previous: DocumentRow | null;
  },
): Promise<DocumentRow> {
  const { upload, previous } = input;
  const name = upload.name ?? previous?.name;
  if (name === undefined) {
    throw new AppError("invalid_request", "query.name: a new document needs a name", {
      field: "query.name",
    });
  }
  const extracted = await extractDocument(upload.bytes, upload.contentType);
  const chunks = chunkSections(extracted);
  const now = Date.now();
  const db = env.DB;
  const quota = knowledgeQuota(env);
  const documentId = previous?.id ?? newId("document", now);
  const versionNumber = (previous?.version ?? 0) + 1;
  const version: VersionRow = {
    document_id: documentId,
    version: versionNumber,
    org_id: input.orgId,
    project_id: input.projectId,
    content_type: upload.contentType,
    bytes: upload.bytes.byteLength,
    text_chars: extracted.text.length,
    sha256: await sha256Hex(upload.bytes),
    created_by: input.userId,
    created_at: now,
  };
  const row: DocumentRow = {
    id: documentId,
    org_id: input.orgId,
    project_id: input.projectId,
    name,
    content_type: upload.contentType,
    version: versionNumber,
    bytes: upload.bytes.byteLength,
    created_by: previous?.created_by ?? input.userId,
    created_at: previous?.created_at ?? now,
    updated_at: now,
  };
  const writes = previous
    ? replaceDocumentStatements(
        db,
        previous,
        { name, contentType: upload.contentType, bytes: row.bytes, now },
        version,
        quota,
      )
    : insertDocumentStatements(db, row, version, quota);
  const [written] = await db.batch([
    ...writes,
    auditStatement(
      db,
      {
        orgId: input.orgId,
        actorId: input.userId,
        action: previous ? "document.replaced" : "document.uploaded",
        subjectType: "document",
        subjectId: documentId,
        data: { version: versionNumber, bytes: row.bytes, contentType: upload.contentType },
      },
      { now, afterChange: true },
    ),
  ]);
  if (written?.meta.changes !== 1) {
    if (previous) {
      const current = await db
        .prepare("SELECT version FROM knowledge_documents WHERE id = ?")
        .bind(documentId)
        .first<{ version: number }>();
      if (!current) throw new AppError("not_found", "Document not found");
      if (current.version !== previous.version) {
        throw new AppError("conflict", "The document changed meanwhile: upload again");
      }
    }
    throw quotaRefusal(quota);
  }
  let staged = false;
  try {
    ({ staged } = await knowledgeBase(env, input.projectId).stage({
      orgId: input.orgId,
      projectId: input.projectId,
      documentId,
      version: versionNumber,
      name,
      text: extracted.text,
      chunks,
      memberId: input.userId,
    }));
  } catch (error) {
    await undo(db, previous, row);
    throw error;
  }
  if (!staged) {
    // The project was erased while the upload ran: its object takes nothing any more.
    await undo(db, previous, row);
    throw new AppError("gone", "This project was erased");
  }
  return row;
}

/** D1's write of an upload the KnowledgeBase did not take, taken back. */
async function undo(db: D1Database, previous: DocumentRow | null, row: DocumentRow): Promise<void> {
  const statements = [
    db
      .prepare("DELETE FROM knowledge_versions WHERE document_id = ? AND version = ?")
      .bind(row.id, row.version),
    previous
      ? db
          .prepare(
            `UPDATE knowledge_documents SET version = ?, bytes = ?, content_type = ?, name = ?, updated_at = ?
             WHERE id = ? AND version = ?`,
          )
          .bind(
            previous.version,
            previous.bytes,
            previous.content_type,
            previous.name,
            previous.updated_at,
            row.id,
            row.version,
          )
      : db.prepare("DELETE FROM knowledge_documents WHERE id = ? AND version = 1").bind(row.id),
  ];
  await db.batch(statements);
}

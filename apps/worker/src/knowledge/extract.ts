import {
  AppError,
  type KnowledgeContentType,
  MAX_DOCUMENT_TEXT_BYTES,
  utf8Bytes,
} from "@parley/shared";
import type { Extracted } from "./chunk.ts";
import { htmlSections } from "./html.ts";
import { markdownSections, plainSections } from "./markdown.ts";
import { pdfSections } from "./pdf.ts";

export { markdownSections, plainSections };

/**
 * A document's bytes to text and heading sections, per format (docs/2026-12-06-knowledge.md,
 * "Formats"). Every refusal is an `AppError` thrown before anything is written: text that is not
 * UTF-8, an encrypted PDF, a file that expands past `MAX_DOCUMENT_TEXT_BYTES`, a body that is not
 * of the type it says.
 */
export async function extractDocument(
  bytes: Uint8Array,
  contentType: KnowledgeContentType,
): Promise<Extracted> {
  const extracted =
    contentType === "application/pdf"
      ? await pdfSections(bytes)
      : contentType === "text/html"
        ? await htmlSections(decodeUtf8(bytes))
        : contentType === "text/markdown"
          ? markdownSections(decodeUtf8(bytes))
          : plainSections(decodeUtf8(bytes));
  checkTextSize(extracted.text);
  if (extracted.text.trim() === "") {
    throw new AppError("invalid_request", "The document has no text to search");
  }
  return extracted;
}

/** Refuses text past the cap: what a small compressed file expanded to is not indexed. */
export function checkTextSize(text: string): void {
  if (text.length > MAX_DOCUMENT_TEXT_BYTES || utf8Bytes(text) > MAX_DOCUMENT_TEXT_BYTES) {
    throw new AppError(
      "payload_too_large",
      `The document's text must be at most ${MAX_DOCUMENT_TEXT_BYTES} bytes once extracted`,
    );
  }
}

/**
 * Strict UTF-8: a byte sequence that is not UTF-8 is refused (a Latin-1 file would otherwise be
 * indexed as U+FFFD and never found), as is a NUL (binary sent as text). A leading BOM is dropped.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new AppError("invalid_request", "The document is not valid UTF-8 text");
  }
  if (text.includes("\u0000")) {
    throw new AppError("invalid_request", "The document holds NUL bytes: it is not text");
  }
  return text.replace(/\r\n?/g, "\n");
}

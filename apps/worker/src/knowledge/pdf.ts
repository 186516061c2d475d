import { AppError, MAX_DOCUMENT_TEXT_BYTES } from "@parley/shared";
import { extractText } from "unpdf";
import type { Extracted, Section } from "./chunk.ts";

/**
 * PDF text through unpdf (pdf.js built for serverless runtimes; docs/2026-12-06-knowledge.md,
 * "Formats"). Each page is a section headed "Page N". Two things pdf.js does not refuse are
 * refused here first: an encrypted file (its text is locked, or its owner forbade copying it), and
 * compressed streams that would expand past what a Worker's memory holds (a "zip bomb": pdf.js
 * inflates a content stream whole before it reads a word of it).
 */

/** Inflated bytes of a PDF's non-image streams, at most (pdf.js holds them while it reads). */
export const MAX_INFLATED_BYTES = 32 * 1024 * 1024;

export async function pdfSections(bytes: Uint8Array): Promise<Extracted> {
  const head = latin1(bytes.subarray(0, 1024));
  if (!head.includes("%PDF-")) {
    throw new AppError("invalid_request", "The body is not a PDF (no %PDF- header)");
  }
  const raw = latin1(bytes);
  if (/\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(raw)) {
    throw new AppError("invalid_request", "Encrypted PDFs are not accepted: upload it unprotected");
  }
  await checkInflatedSize(bytes, raw);
  let pages: string[];
  try {
    // A copy: pdf.js transfers (detaches) the buffer it is given.
    pages = (await extractText(bytes.slice(), { mergePages: false })).text;
  } catch (error) {
    if ((error as { name?: string }).name === "PasswordException") {
      throw new AppError(
        "invalid_request",
        "Encrypted PDFs are not accepted: upload it unprotected",
      );
    }
    throw new AppError("invalid_request", "The PDF could not be read", { cause: error });
  }
  let text = "";
  const sections: Section[] = [];
  for (const [index, page] of pages.entries()) {
    const body = page
      .replace(/\r\n?/g, "\n")
      .replace(/[ \t]+\n/g, "\n")
      .trim();
    if (body === "") continue;
    if (text !== "") text += "\n\n";
    const start = text.length;
    text += body;
    sections.push({ headings: [`Page ${index + 1}`], start, end: text.length });
    if (text.length > MAX_DOCUMENT_TEXT_BYTES) break;
  }
  return { text, sections };
}

/**
 * Bytes as one character each, so string offsets are byte offsets (workerd's TextDecoder has no
 * single-byte encodings: "latin1" decoded as UTF-8 and shifted every offset after a high byte).
 */
function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return out;
}

/**
 * Inflates every Flate stream that is not an image (pdf.js reads content, font and object streams
 * to extract text; images it leaves alone) and refuses the file once their total passes
 * `MAX_INFLATED_BYTES`, before pdf.js sees it. Streams are found by their `stream`/`endstream`
 * keywords; a damaged stream counts what inflated before the damage.
 */
async function checkInflatedSize(bytes: Uint8Array, raw: string): Promise<void> {
  let total = 0;
  const opener = /stream\r?\n/g;
  for (let match = opener.exec(raw); match; match = opener.exec(raw)) {
    if (raw.slice(match.index - 3, match.index) === "end") continue;
    const start = match.index + match[0].length;
    const keyword = raw.indexOf("endstream", start);
    if (keyword < 0) break;
    opener.lastIndex = keyword + "endstream".length;
    // The end of line before `endstream` is not data (workerd's inflater refuses trailing bytes).
    let end = keyword;
    while (end > start && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end--;
    const dictionary = raw.slice(Math.max(0, raw.lastIndexOf("obj", match.index)), match.index);
    if (!dictionary.includes("FlateDecode") || /\/Subtype\s*\/Image/.test(dictionary)) continue;
    total += await inflatedBytes(bytes.subarray(start, end), MAX_INFLATED_BYTES - total);
    if (total > MAX_INFLATED_BYTES) {
      throw new AppError(
        "payload_too_large",
        `The PDF's compressed streams expand past ${MAX_INFLATED_BYTES} bytes: it is not accepted`,
      );
    }
  }
}

/** How many bytes a zlib stream inflates to, counting no further than just past `budget`. */
async function inflatedBytes(data: Uint8Array, budget: number): Promise<number> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate"));
  const reader = stream.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > budget) {
        await reader.cancel();
        break;
      }
    }
  } catch {
    // Damaged or followed by junk: what inflated so far is what pdf.js would hold too.
  }
  return size;
}

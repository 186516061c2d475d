import type { Extracted, Section } from "./chunk.ts";

/**
 * HTML to text with Workers' own streaming parser (HTMLRewriter, lol-html): the text of the page
 * without scripts, styles, templates, anything hidden from a reader (`<head>`, `<noscript>`,
 * `<svg>`) or the site's chrome (`<nav>`, `<footer>`); `<h1>`..`<h6>` cut sections as Markdown headings do; block elements end lines so
 * words of two paragraphs never run together.
 */

/**
 * Never text of the page: hidden or executable parts, and its chrome (the site's navigation and
 * footer, on every page of a site alike: links, copyright, cookie notes). Indexed, the chrome
 * matched every question about "privacy" or "contact" and showed up in cited passages.
 */
const SKIPPED = [
  "script",
  "style",
  "noscript",
  "template",
  "head",
  "svg",
  "iframe",
  "object",
  "nav",
  "footer",
];
/** Elements that end lines. None of them is SKIPPED: lol-html keeps one end-tag handler per element, so a second would replace the skip's. */
const BLOCKS =
  "p, div, section, article, header, main, aside, li, ul, ol, dl, dt, dd, tr, table, blockquote, pre, br, hr, figure, figcaption, form";

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ndash: "–",
  mdash: "—",
  hellip: "…",
  rsquo: "’",
  lsquo: "‘",
  rdquo: "”",
  ldquo: "“",
  copy: "©",
  reg: "®",
  trade: "™",
  euro: "€",
};

/**
 * HTMLRewriter hands text over as written in the source: character references are decoded here
 * (numeric ones, and the named ones help pages use; an unknown name stays as written).
 */
export function decodeEntities(text: string): string {
  return text.replace(
    /&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z][a-z0-9]{1,31});/gi,
    (whole, ref: string) => {
      if (ref.startsWith("#")) {
        const code =
          ref[1] === "x" || ref[1] === "X"
            ? Number.parseInt(ref.slice(2), 16)
            : Number(ref.slice(1));
        if (
          !Number.isInteger(code) ||
          code <= 0 ||
          code > 0x10ffff ||
          (code >= 0xd800 && code <= 0xdfff)
        )
          return "\uFFFD";
        return String.fromCodePoint(code);
      }
      return ENTITIES[ref.toLowerCase()] ?? whole;
    },
  );
}

interface Piece {
  kind: "text" | "break" | "heading-start" | "heading-end";
  text?: string;
  level?: number;
}

export async function htmlSections(html: string): Promise<Extracted> {
  const pieces: Piece[] = [];
  let skipping = 0;
  const rewriter = new HTMLRewriter()
    .on(SKIPPED.join(", "), {
      element(element) {
        skipping++;
        element.onEndTag(() => {
          skipping--;
        });
      },
    })
    .on(BLOCKS, {
      element(element) {
        pieces.push({ kind: "break" });
        if (!element.removed && !["br", "hr"].includes(element.tagName)) {
          try {
            element.onEndTag(() => {
              pieces.push({ kind: "break" });
            });
          } catch {
            // A void element written as a container has no end tag to wait for.
          }
        }
      },
    })
    .on("h1, h2, h3, h4, h5, h6", {
      element(element) {
        const level = Number(element.tagName.slice(1));
        pieces.push({ kind: "heading-start", level });
        element.onEndTag(() => {
          pieces.push({ kind: "heading-end", level });
        });
      },
    })
    .onDocument({
      text(chunk) {
        if (skipping === 0 && chunk.text !== "") pieces.push({ kind: "text", text: chunk.text });
      },
    });
  // The rewriter streams; reading its output to the end drives the handlers over the whole page.
  await rewriter.transform(new Response(html)).arrayBuffer();
  return assemble(pieces);
}

/** Pieces to text (whitespace collapsed as a browser shows it) and sections at each heading. */
function assemble(pieces: Piece[]): Extracted {
  let text = "";
  const sections: Section[] = [];
  const path: { level: number; title: string }[] = [];
  let sectionStart = 0;
  let heading: { level: number; title: string } | null = null;
  const newline = () => {
    text = text.replace(/[ \t]+$/, "");
    if (text !== "" && !text.endsWith("\n\n")) text += text.endsWith("\n") ? "\n" : "\n\n";
  };
  for (const piece of pieces) {
    if (piece.kind === "text") {
      const words = decodeEntities(piece.text ?? "").replace(/\s+/g, " ");
      const chunk = text === "" || /\s$/.test(text) ? words.replace(/^ /, "") : words;
      text += chunk;
      if (heading) heading.title += words;
    } else if (piece.kind === "break") {
      newline();
    } else if (piece.kind === "heading-start") {
      newline();
      if (text.length > sectionStart) {
        sections.push({
          headings: path.map((h) => h.title),
          start: sectionStart,
          end: text.length,
        });
      }
      sectionStart = text.length;
      heading = { level: piece.level ?? 1, title: "" };
    } else if (heading) {
      while (path.length > 0 && (path.at(-1)?.level ?? 0) >= heading.level) path.pop();
      path.push({ level: heading.level, title: heading.title.replace(/\s+/g, " ").trim() });
      heading = null;
      newline();
    }
  }
  text = text.trimEnd();
  if (text.length > sectionStart) {
    sections.push({ headings: path.map((h) => h.title), start: sectionStart, end: text.length });
  }
  return {
    text,
    sections: sections.length > 0 ? sections : [{ headings: [], start: 0, end: text.length }],
  };
}

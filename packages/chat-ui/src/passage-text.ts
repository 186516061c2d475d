/**
 * A cited passage as a person reads it in the source dialog (reply-sources.tsx). Passages are the
 * document's text as written: Markdown keeps its syntax (`**`, `#`, `[text](url)`), and a Markdown
 * or HTML page can carry raw HTML (a `<footer>` of links, comments, `<br>`s). Shown as typed, that
 * read as junk. This turns it into plain reading text, never into HTML: page chrome (`<footer>`,
 * `<nav>`, scripts, styles, comments) goes with its content, other tags go and leave their text,
 * Markdown's marks go and leave their words, links keep their text. Code (fenced blocks, inline
 * code) stays exactly as written: an HTML tag in a code sample is the sample.
 */

/** Elements whose content is no part of the passage's reading text. */
const CHROME = "footer|nav|script|style|head|template|noscript|svg|iframe|object|aside|form";
const CHROME_BLOCK = new RegExp(`<(${CHROME})\\b[^>]*>[\\s\\S]*?</\\1\\s*>`, "gi");
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
/** A tag: `<name ...>`, `</name>`, `<name/>` (a `<` before a space or digit is text: `a < b`). */
const TAG = /<\/?[a-z][a-z0-9-]*(?:\s[^<>]*)?\/?>/gi;
const BREAK_TAG = /<(?:br|\/p|\/div|\/li|\/h[1-6]|\/tr)\b[^>]*>/gi;
const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  "#39": "'",
};

function plainProse(text: string): string {
  return (
    text
      .replace(COMMENT, "")
      .replace(CHROME_BLOCK, "")
      .replace(BREAK_TAG, "\n")
      .replace(TAG, "")
      // Markdown: images keep their alt text, links their text, headings and quotes lose marks.
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
      .replace(/^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/gm, "$1")
      .replace(/^ {0,3}>[ \t]?/gm, "")
      .replace(/^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/gm, "")
      // Emphasis: `**a**`, `__a__`, `*a*`, `_a_`, `~~a~~` (an `_` inside a word is no mark).
      .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, "$2")
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1")
      .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, "$1$2")
      .replace(/(^|[^\w])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1$2")
      .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, name: string) => ENTITIES[name] ?? "")
  );
}

/** Inline code spans kept as written (their backticks dropped), the prose around them cleaned. */
function plainLine(text: string): string {
  return text
    .split(/(`+[^`\n]*`+)/)
    .map((part, index) => (index % 2 === 1 ? part.replace(/^`+|`+$/g, "") : plainProse(part)))
    .join("");
}

/** The passage as plain reading text (see above): code kept, blank runs squeezed. */
export function passageText(text: string): string {
  const out: string[] = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let prose: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    // Prose is cleaned a block at a time: an element or emphasis may span lines.
    if (prose.length > 0) out.push(plainLine(prose.join("\n")));
    prose = [];
  };
  for (const line of lines) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      else out.push(line);
      continue;
    }
    if (marker) {
      flush();
      fence = marker;
      continue;
    }
    prose.push(line);
  }
  flush();
  return out
    .join("\n")
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * Where the reply's quote sits in the reading text: the quote is cleaned the same way and matched
 * across any whitespace (a quote is one line; the passage may break it). Null when it is not there.
 */
export function findQuote(text: string, quote: string): { start: number; end: number } | null {
  const words = passageText(quote.replace(/^…|…$/g, ""))
    .split(/\s+/)
    .filter((word) => word !== "");
  if (words.length === 0) return null;
  const escaped = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const match = new RegExp(escaped.join("\\s+")).exec(text);
  return match ? { start: match.index, end: match.index + match[0].length } : null;
}

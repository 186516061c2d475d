import type { Extracted, Section } from "./chunk.ts";

/** Text formats' sections, pure (the Node bench runs them too). */

/** Plain text: one section, no heading. */
export function plainSections(text: string): Extracted {
  return { text, sections: [{ headings: [], start: 0, end: text.length }] };
}

const FENCE = /^\s{0,3}(```|~~~)/;
const ATX = /^\s{0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$/;
const SETEXT = /^\s{0,3}(=+|-+)\s*$/;

/**
 * Markdown: ATX (`## Title`) and setext (underlined) headings cut sections; a heading path keeps
 * the enclosing levels. Fenced code blocks are text (a `#` comment in one is no heading). The text
 * stays Markdown as written: the model and a citation read it as the author wrote it.
 */
export function markdownSections(text: string): Extracted {
  const sections: Section[] = [];
  const path: { level: number; title: string }[] = [];
  let sectionStart = 0;
  let inFence = false;
  let offset = 0;
  const lines = text.split("\n");
  const open = (start: number) => {
    sectionStart = start;
  };
  const close = (end: number) => {
    // A heading followed at once by another heading has no text of its own: its title lives on
    // in the path of the sections under it.
    const body = text.slice(sectionStart, end).replace(/^[^\n]*\n?/, "");
    if (end > sectionStart && (body.trim() !== "" || path.length === 0)) {
      sections.push({ headings: path.map((h) => h.title), start: sectionStart, end });
    }
  };
  for (const [index, line] of lines.entries()) {
    const lineStart = offset;
    offset += line.length + 1;
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) continue;
    let heading: { level: number; title: string } | null = null;
    const atx = ATX.exec(line);
    if (atx) heading = { level: atx[1]?.length ?? 1, title: atx[2] ?? "" };
    const next = lines[index + 1];
    if (!heading && line.trim() !== "" && next !== undefined && SETEXT.test(next)) {
      // A setext heading: this line, underlined by the next (`===` level 1, `---` level 2).
      const previous = lines[index - 1];
      if (previous === undefined || previous.trim() === "") {
        heading = { level: next.trim().startsWith("=") ? 1 : 2, title: line.trim() };
      }
    }
    if (!heading) continue;
    close(lineStart);
    while (path.length > 0 && (path.at(-1)?.level ?? 0) >= heading.level) path.pop();
    path.push({ level: heading.level, title: heading.title.replace(/[*_`]/g, "").trim() });
    open(lineStart);
  }
  close(text.length);
  return { text, sections: sections.length > 0 ? sections : plainSections(text).sections };
}

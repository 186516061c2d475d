/**
 * A small markdown renderer for the embeddable assistant, in place of streamdown (165 KB gzip,
 * over the embed's whole budget). The embed's build resolves `markdown-renderer.tsx` to this file
 * (packages/embed/build.mjs), so `Markdown` and ChatView are unchanged.
 *
 * It parses the subset replies use (paragraphs, headings, emphasis, strikethrough, inline code,
 * fenced and indented code, lists with nesting and task boxes, quotes, rules, GFM tables, links
 * and bare URLs) straight into elements: the model's text never becomes HTML, so raw HTML in a
 * reply shows as text. Links must be http(s) or mailto (no `javascript:`, no relative URLs that
 * would resolve against the host's page) and open in a new tab with `rel="noopener noreferrer
 * nofollow"`; images show as links, so a reply cannot make the page fetch a URL. Code is
 * highlighted by light-highlight.tsx (Shiki alone is ~3x the budget) and tables carry the app's
 * copy and CSV tools (light-table.tsx). While a reply streams, an unclosed fence renders as code
 * and an unclosed `**`/`*`/`` ` `` shows as typed until it closes.
 */
// biome-ignore-all lint/suspicious/noArrayIndexKey: a block's place is its identity (the text is re-parsed on every render and only grows while it streams)
import type { ReactNode } from "react";
import { cn } from "./cn.ts";
import { Highlighted } from "./light-highlight.tsx";
import { TableBlock } from "./light-table.tsx";
import { CopyButton } from "./reply-footer.tsx";

type Align = "left" | "center" | "right" | null;
type Block =
  | { kind: "p"; text: string }
  | { kind: "h"; level: number; text: string }
  | { kind: "code"; lang: string; text: string }
  | { kind: "hr" }
  | { kind: "quote"; blocks: Block[] }
  | { kind: "list"; ordered: boolean; start: number; items: ListItem[] }
  | { kind: "table"; align: Align[]; head: string[]; rows: string[][] };
interface ListItem {
  checked: boolean | null;
  blocks: Block[];
}

const FENCE = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const TABLE_DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const INDENTED_CODE = /^( {4}|\t)/;
const blank = (line: string) => line.trim() === "";

function cells(row: string): string[] {
  let text = row.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

/** Whether `line` starts a block other than a paragraph (so it ends a paragraph). */
function interrupts(line: string, next: string | undefined): boolean {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    ITEM.test(line) ||
    (line.includes("|") && next !== undefined && TABLE_DELIMITER.test(next) && next.includes("-"))
  );
}

/** Block structure of markdown text. Exported for tests. */
export function parseBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (blank(line)) {
      i += 1;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent = "", marker = "```", lang = ""] = fence;
      const body: string[] = [];
      i += 1;
      while (i < lines.length) {
        const current = lines[i] as string;
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(current);
        if (close?.[1] && close[1][0] === marker[0] && close[1].length >= marker.length) {
          i += 1;
          break;
        }
        body.push(current.startsWith(indent) ? current.slice(indent.length) : current.trimStart());
        i += 1;
      }
      blocks.push({ kind: "code", lang, text: body.join("\n") });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ kind: "h", level: heading[1]?.length ?? 1, text: heading[2] ?? "" });
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ kind: "hr" });
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && !blank(lines[i] as string)) {
        const current = lines[i] as string;
        if (!QUOTE.test(current) && interrupts(current, lines[i + 1])) break;
        inner.push(current.replace(QUOTE, ""));
        i += 1;
      }
      blocks.push({ kind: "quote", blocks: parseBlocks(inner.join("\n")) });
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2] ?? "");
      const list: Block & { kind: "list" } = {
        kind: "list",
        ordered,
        start: ordered ? Number.parseInt(item[2] ?? "1", 10) : 1,
        items: [],
      };
      while (i < lines.length) {
        const match = ITEM.exec(lines[i] as string);
        if (!match || /\d/.test(match[2] ?? "") !== ordered) break;
        const width =
          (match[1]?.length ?? 0) + (match[2]?.length ?? 0) + Math.max(1, match[3]?.length ?? 1);
        const content = [match[4] ?? ""];
        i += 1;
        while (i < lines.length) {
          const current = lines[i] as string;
          if (blank(current)) {
            // A blank line continues the item only if indented content follows.
            const after = lines[i + 1];
            if (
              after !== undefined &&
              !blank(after) &&
              /^\s+/.test(after) &&
              after.length - after.trimStart().length >= Math.min(width, 2)
            ) {
              content.push("");
              i += 1;
              continue;
            }
            break;
          }
          const indent = current.length - current.trimStart().length;
          if (indent >= Math.min(width, 2)) content.push(current.slice(Math.min(indent, width)));
          else if (!interrupts(current, lines[i + 1])) content.push(current.trimStart());
          else break;
          i += 1;
        }
        let text = content.join("\n");
        let checked: boolean | null = null;
        const task = /^\[([ xX])\]\s+/.exec(text);
        if (task) {
          checked = task[1] !== " ";
          text = text.slice(task[0].length);
        }
        list.items.push({ checked, blocks: parseBlocks(text) });
        // Items separated by a blank line stay one list.
        if (i < lines.length && blank(lines[i] as string)) {
          const next = lines[i + 1];
          const nextItem = next === undefined ? null : ITEM.exec(next);
          if (nextItem && /\d/.test(nextItem[2] ?? "") === ordered) i += 1;
        }
      }
      blocks.push(list);
      continue;
    }
    const next = lines[i + 1];
    if (
      line.includes("|") &&
      next !== undefined &&
      TABLE_DELIMITER.test(next) &&
      next.includes("-")
    ) {
      const head = cells(line);
      const align = cells(next).map((cell): Align => {
        const left = cell.startsWith(":");
        const right = cell.endsWith(":");
        return left && right ? "center" : right ? "right" : left ? "left" : null;
      });
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && !blank(lines[i] as string) && (lines[i] as string).includes("|")) {
        rows.push(cells(lines[i] as string));
        i += 1;
      }
      blocks.push({ kind: "table", align, head, rows });
      continue;
    }
    if (INDENTED_CODE.test(line)) {
      const body: string[] = [];
      while (
        i < lines.length &&
        (INDENTED_CODE.test(lines[i] as string) || blank(lines[i] as string))
      ) {
        body.push((lines[i] as string).replace(INDENTED_CODE, ""));
        i += 1;
      }
      blocks.push({ kind: "code", lang: "", text: body.join("\n").replace(/\n+$/, "") });
      continue;
    }
    const paragraph = [line];
    i += 1;
    while (
      i < lines.length &&
      !blank(lines[i] as string) &&
      !interrupts(lines[i] as string, lines[i + 1])
    ) {
      paragraph.push(lines[i] as string);
      i += 1;
    }
    // Trailing spaces before a line end are a hard break: keep them but on the last line.
    const last = paragraph.length - 1;
    const text = paragraph.map((l, n) => (n === last ? l.trim() : l.trimStart())).join("\n");
    blocks.push({ kind: "p", text });
  }
  return blocks;
}

/** A link target a reply may use: absolute http(s) or mailto, else null. Exported for tests. */
export function safeHref(url: string): string | null {
  const trimmed = url.trim();
  // Control characters and spaces inside a scheme are how `java\tscript:` gets past checks.
  if ([...trimmed].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)) return null;
  try {
    const parsed = new URL(trimmed);
    return parsed.protocol === "https:" ||
      parsed.protocol === "http:" ||
      parsed.protocol === "mailto:"
      ? parsed.href
      : null;
  } catch {
    return null;
  }
}

function Link({ href, children }: { href: string; children: ReactNode }) {
  const safe = safeHref(href);
  if (!safe) return <>{children}</>;
  return (
    <a
      href={safe}
      target="_blank"
      rel="noopener noreferrer nofollow"
      className="text-primary underline underline-offset-2"
    >
      {children}
    </a>
  );
}

// Inline syntax, tried in this order at each position (sticky: anchored at lastIndex).
const ESCAPE = /\\([!-/:-@[-`{-~])/y;
const CODE_SPAN = /(`+)([\s\S]*?[^`])\1(?!`)/y;
const IMAGE_OR_LINK =
  /(!?)\[((?:\\.|[^\]\\])*)\]\(\s*<?([^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)>?(?:\s+"[^"]*")?\s*\)/y;
const AUTOLINK = /<((?:https?|mailto):[^\s<>]+)>/y;
const BARE_URL = /https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"*_~]/y;
const STRONG = /(\*\*|__)(?=\S)([\s\S]*?\S)\1/y;
const STRIKE = /~~(?=\S)([\s\S]*?\S)~~/y;
const EM_STAR = /\*(?=[^\s*])([\s\S]*?[^\s*])\*/y;
const EM_UNDERSCORE = /_(?=[^\s_])([\s\S]*?[^\s_])_(?![A-Za-z0-9])/y;
const BREAK = / {2,}\n|\\\n/y;

function at(pattern: RegExp, text: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(text);
}

interface InlineRule {
  /** Characters the syntax can start with (a cheap test before the pattern). */
  first: string;
  pattern: RegExp;
  /** Whether the syntax may start at `i` (word boundaries). */
  allowed?: (text: string, i: number) => boolean;
  /** The element, or a string to add as plain text. */
  render: (m: RegExpExecArray, key: string) => ReactNode;
}

const wordBefore = (text: string, i: number) => /[A-Za-z0-9]/.test(text[i - 1] ?? "");

const INLINE: InlineRule[] = [
  { first: "\\", pattern: ESCAPE, render: (m) => m[1] ?? "" },
  { first: " \\", pattern: BREAK, render: (_, key) => <br key={key} /> },
  {
    first: "`",
    pattern: CODE_SPAN,
    render: (m, key) => {
      const code = (m[2] ?? "").replace(/\n/g, " ");
      return (
        <code key={key} className="rounded bg-muted px-1 py-0.5 font-mono text-[0.85em]">
          {/^ .* $/.test(code) ? code.slice(1, -1) : code}
        </code>
      );
    },
  },
  {
    first: "[!",
    pattern: IMAGE_OR_LINK,
    render: ([, bang, label = "", href = ""], key) => (
      <Link key={key} href={href}>
        {bang ? label || href : renderInline(label, `${key}-`)}
      </Link>
    ),
  },
  {
    first: "<",
    pattern: AUTOLINK,
    render: (m, key) => (
      <Link key={key} href={m[1] ?? ""}>
        {m[1]}
      </Link>
    ),
  },
  {
    first: "h",
    pattern: BARE_URL,
    allowed: (text, i) => !wordBefore(text, i),
    render: (m, key) => (
      <Link key={key} href={m[0]}>
        {m[0]}
      </Link>
    ),
  },
  {
    first: "*_",
    pattern: STRONG,
    render: (m, key) => (
      <strong key={key} className="font-semibold">
        {renderInline(m[2] ?? "", `${key}-`)}
      </strong>
    ),
  },
  {
    first: "~",
    pattern: STRIKE,
    render: (m, key) => <del key={key}>{renderInline(m[1] ?? "", `${key}-`)}</del>,
  },
  {
    first: "*",
    pattern: EM_STAR,
    render: (m, key) => <em key={key}>{renderInline(m[1] ?? "", `${key}-`)}</em>,
  },
  {
    first: "_",
    pattern: EM_UNDERSCORE,
    allowed: (text, i) => !wordBefore(text, i),
    render: (m, key) => <em key={key}>{renderInline(m[1] ?? "", `${key}-`)}</em>,
  },
];

/** Inline markdown as elements. Exported for tests. */
export function renderInline(text: string, keyPrefix = "i"): ReactNode[] {
  const out: ReactNode[] = [];
  let plain = "";
  let i = 0;
  outer: while (i < text.length) {
    const ch = text[i] as string;
    for (const rule of INLINE) {
      if (!rule.first.includes(ch) || (rule.allowed && !rule.allowed(text, i))) continue;
      const m = at(rule.pattern, text, i);
      if (!m) continue;
      const node = rule.render(m, `${keyPrefix}${out.length}`);
      if (typeof node === "string") plain += node;
      else {
        if (plain) out.push(plain);
        plain = "";
        out.push(node);
      }
      i += m[0].length;
      continue outer;
    }
    plain += ch;
    i += 1;
  }
  if (plain) out.push(plain);
  return out;
}

const HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"] as const;
const HEADING_CLASS = [
  "text-base font-semibold",
  "text-base font-semibold",
  "text-sm font-semibold",
  "text-sm font-semibold",
  "text-sm font-medium",
  "text-sm font-medium",
];

function renderBlocks(blocks: Block[], prefix = "b"): ReactNode[] {
  return blocks.map((block, index) => {
    const key = `${prefix}${index}`;
    switch (block.kind) {
      case "p":
        return (
          <p key={key} className="my-2">
            {renderInline(block.text, `${key}-`)}
          </p>
        );
      case "h": {
        const Tag = HEADINGS[block.level - 1] ?? "h6";
        return (
          <Tag key={key} className={cn("mt-4 mb-2", HEADING_CLASS[block.level - 1])}>
            {renderInline(block.text, `${key}-`)}
          </Tag>
        );
      }
      case "code":
        return (
          <div key={key} className="group relative my-2 rounded-md border border-border bg-muted">
            <div className="flex items-center justify-between px-3 pt-1.5 text-muted-foreground text-xs">
              <span>{block.lang}</span>
              <CopyButton text={block.text} />
            </div>
            <pre className="overflow-x-auto px-3 pb-3 font-mono text-xs leading-relaxed">
              <code>
                <Highlighted code={block.text} lang={block.lang} />
              </code>
            </pre>
          </div>
        );
      case "hr":
        return <hr key={key} className="my-4 border-border" />;
      case "quote":
        return (
          <blockquote
            key={key}
            className="my-2 border-border border-l-2 pl-3 text-muted-foreground"
          >
            {renderBlocks(block.blocks, `${key}-`)}
          </blockquote>
        );
      case "list": {
        const items = block.items.map((item, n) => {
          // A tight item (one paragraph) renders its text without a paragraph's margins.
          const only =
            item.blocks.length === 1 && item.blocks[0]?.kind === "p" ? item.blocks[0] : null;
          return (
            <li key={`${key}-${n}`} className={cn("my-0.5", item.checked !== null && "list-none")}>
              {item.checked === null ? null : (
                <input
                  type="checkbox"
                  checked={item.checked}
                  disabled
                  className="mr-1.5 align-middle"
                />
              )}
              {only
                ? renderInline(only.text, `${key}-${n}-`)
                : renderBlocks(item.blocks, `${key}-${n}-`)}
            </li>
          );
        });
        return block.ordered ? (
          <ol key={key} start={block.start} className="my-2 list-decimal pl-6">
            {items}
          </ol>
        ) : (
          <ul key={key} className="my-2 list-disc pl-6">
            {items}
          </ul>
        );
      }
      case "table":
        return (
          <TableBlock
            key={key}
            head={block.head}
            rows={block.rows}
            align={block.align}
            renderCell={(text, cellKey) => renderInline(text, `${key}-${cellKey}`)}
          />
        );
      default:
        return null;
    }
  });
}

/** Markdown as elements; the same contract as markdown-renderer.tsx's (see `Markdown`). */
export function MarkdownRenderer({
  text,
  className,
}: {
  text: string;
  streaming: boolean;
  className?: string;
}) {
  return (
    <div
      className={cn(
        "min-w-0 break-words text-sm leading-relaxed [&>*:first-child]:mt-0 [&>*:last-child]:mb-0",
        className,
      )}
    >
      {renderBlocks(parseBlocks(text))}
    </div>
  );
}

/**
 * Code highlighting for the embed's markdown renderer, in GitHub's colors as the app's Shiki
 * theme: keywords, strings, comments, numbers and called functions of the C-like languages,
 * Python, shells, SQL and the like, by one pass of a tokenizer. Shiki (the app's) is about three
 * times the embed's whole budget, and the small libraries either build HTML strings (the renderer
 * never turns the model's text into HTML) or fetch each language by a computed path; this is
 * about 1 KB gzip and makes text nodes only. A wrong guess colours a word wrongly, nothing more.
 */
import type { ReactNode } from "react";

export type TokenKind = "keyword" | "string" | "comment" | "number" | "function" | "plain";

const KEYWORDS = new Set(
  (
    "abstract as async await break case catch class const continue def default del delete do elif else " +
    "enum except export extends false final finally fn for from func function go if impl import in " +
    "instanceof interface is lambda let loop match mod mut new nil none not null of or and package " +
    "pass private protected pub public raise readonly return self select static struct super switch " +
    "this throw true try type typeof undefined use var void when where while with yield " +
    "True False None echo then fi done esac local export " +
    "SELECT FROM WHERE INSERT INTO UPDATE DELETE CREATE TABLE JOIN ON AND OR NOT NULL AS ORDER BY GROUP LIMIT VALUES SET"
  ).split(" "),
);

/** Languages whose `#` starts a comment (elsewhere it is a CSS colour, a private field, a directive). */
const HASH_COMMENTS = new Set([
  "py",
  "python",
  "sh",
  "bash",
  "shell",
  "zsh",
  "console",
  "rb",
  "ruby",
  "yaml",
  "yml",
  "toml",
  "r",
  "perl",
  "dockerfile",
  "makefile",
  "ini",
]);
/** Languages whose `--` starts a comment. */
const DASH_COMMENTS = new Set(["sql", "lua", "haskell", "hs"]);

const TOKEN =
  /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|("(?:\\[\s\S]|[^"\\\n])*"?|'(?:\\[\s\S]|[^'\\\n])*'?|`(?:\\[\s\S]|[^`\\])*`?)|(\b(?:0x[\da-fA-F]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b)|([A-Za-z_$][\w$]*)(\s*\()?|([\s\S])/y;

/** The code as kinded pieces whose texts join back to it exactly. */
export function tokenize(code: string, lang: string): { kind: TokenKind; text: string }[] {
  const language = lang.toLowerCase();
  const hash = HASH_COMMENTS.has(language);
  const dash = DASH_COMMENTS.has(language);
  const out: { kind: TokenKind; text: string }[] = [];
  const push = (kind: TokenKind, text: string) => {
    const last = out.at(-1);
    if (last && last.kind === kind) last.text += text;
    else out.push({ kind, text });
  };
  let index = 0;
  while (index < code.length) {
    if ((hash && code.startsWith("#", index)) || (dash && code.startsWith("--", index))) {
      const end = code.indexOf("\n", index);
      const stop = end < 0 ? code.length : end;
      push("comment", code.slice(index, stop));
      index = stop;
      continue;
    }
    TOKEN.lastIndex = index;
    const match = TOKEN.exec(code);
    if (!match) break;
    const [whole, comment, string, number, word, call, other] = match;
    if (comment !== undefined) push("comment", comment);
    else if (string !== undefined) push("string", string);
    else if (number !== undefined) push("number", number);
    else if (word !== undefined) {
      if (KEYWORDS.has(word)) push("keyword", word);
      else push(call === undefined ? "plain" : "function", word);
      if (call !== undefined) push("plain", call);
    } else push("plain", other ?? whole);
    index += whole.length;
  }
  return out;
}

const COLOURS: Record<Exclude<TokenKind, "plain">, string> = {
  keyword: "text-code-keyword",
  string: "text-code-string",
  comment: "text-code-comment italic",
  number: "text-code-number",
  function: "text-code-function",
};

/** A code block's text, highlighted. */
export function Highlighted({ code, lang }: { code: string; lang: string }): ReactNode {
  return tokenize(code, lang).map((token, n) =>
    token.kind === "plain" ? (
      token.text
    ) : (
      // biome-ignore lint/suspicious/noArrayIndexKey: a token's place is its identity (re-tokenized as the reply streams)
      <span key={n} className={COLOURS[token.kind]}>
        {token.text}
      </span>
    ),
  );
}

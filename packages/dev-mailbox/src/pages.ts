/**
 * The mailbox's pages: the list of what was sent and one message (its HTML, its text with links
 * clickable, its headers and the raw MIME). Mail is someone else's markup: its HTML is never put
 * in these pages, only served alone under a CSP that runs no script and loads nothing, shown in a
 * sandboxed frame (see `messageHtmlHeaders`).
 */
import type { StoredMessage } from "./store.ts";

export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** Plain text with its http(s) URLs as links (everything else escaped). */
export function linkify(text: string): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(/https?:\/\/[^\s"'<>()]+/g)) {
    const url = match[0].replace(/[.,;:!?]+$/, "");
    const at = match.index ?? 0;
    out += escapeHtml(text.slice(last, at));
    out += `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
    last = at + url.length;
  }
  return out + escapeHtml(text.slice(last));
}

const STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1b1f24; --muted: #5b6470; --line: #dde1e6; --accent: #2f5bd3; }
@media (prefers-color-scheme: dark) { :root { --bg: #111418; --card: #1a1e24; --fg: #e8eaed; --muted: #a3acb8; --line: #2c323a; --accent: #8fb0ff; } }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; background: var(--bg); color: var(--fg); }
header, main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
header p { color: var(--muted); margin: .25rem 0 0; }
h1 { font-size: 1.375rem; margin: 0; }
h2 { font-size: 1.0625rem; margin: 1.5rem 0 .5rem; }
a { color: var(--accent); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
ol.messages { list-style: none; margin: 0; padding: 0; }
ol.messages li { border-bottom: 1px solid var(--line); }
ol.messages li:last-child { border-bottom: 0; }
ol.messages a { display: grid; gap: .125rem; padding: .75rem 1rem; text-decoration: none; color: inherit; }
ol.messages a:hover, ol.messages a:focus-visible { background: color-mix(in srgb, var(--accent) 10%, transparent); }
.subject { font-weight: 600; color: var(--accent); overflow-wrap: anywhere; }
.meta { color: var(--muted); font-size: .875rem; overflow-wrap: anywhere; }
.kind { display: inline-block; border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; font-size: .75rem; margin-left: .25rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; padding: 1rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
pre { margin: 0; padding: 1rem; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8125rem; }
iframe { width: 100%; min-height: 28rem; border: 0; border-radius: 8px; background: #fff; }
ul.links { margin: 0; padding: 1rem 1rem 1rem 2rem; overflow-wrap: anywhere; }
.empty { padding: 1rem; color: var(--muted); }
button { font: inherit; padding: .375rem .75rem; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); cursor: pointer; }
nav { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

const time = (iso: string) => `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso)}</time>`;

/** `GET /`: what was sent, newest first. */
export function listPage(messages: readonly StoredMessage[]): string {
  const items = messages
    .map(
      (m) => `<li><a href="/messages/${escapeHtml(m.id)}">
<span class="subject">${escapeHtml(m.subject || "(no subject)")}</span>
<span class="meta">To ${escapeHtml(m.to.join(", ") || m.envelope.to.join(", "))}${m.kind ? `<span class="kind">${escapeHtml(m.kind)}</span>` : ""}</span>
<span class="meta">${time(m.receivedAt)}</span>
</a></li>`,
    )
    .join("\n");
  return page(
    "Development mailbox",
    `<header>
<h1>Development mailbox</h1>
<p>Every mail Parley sent while running locally. Nothing here left this machine.</p>
</header>
<main>
<nav>
<span class="meta">${messages.length} ${messages.length === 1 ? "message" : "messages"}</span>
<form method="post" action="/clear"><button type="submit">Empty the mailbox</button></form>
</nav>
<h2>Messages</h2>
<div class="card">
${messages.length === 0 ? '<p class="empty">No mail yet. Sign up, invite someone or ask for a password reset.</p>' : `<ol class="messages">\n${items}\n</ol>`}
</div>
</main>`,
  );
}

/** `GET /messages/:id`: one message. */
export function messagePage(m: StoredMessage): string {
  const headerRows = [
    ["From", m.from ?? ""],
    ["To", m.to.join(", ")],
    ["Subject", m.subject],
    ["Date", m.date ?? ""],
    ["Message-ID", m.messageId ?? ""],
    ["Envelope", `${m.envelope.from} → ${m.envelope.to.join(", ")}`],
  ]
    .map(([k, v]) => `<dt>${escapeHtml(k ?? "")}</dt><dd>${escapeHtml(v ?? "")}</dd>`)
    .join("\n");
  const links = m.links
    .map((url) => `<li><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></li>`)
    .join("\n");
  return page(
    m.subject || "Message",
    `<header>
<nav><a href="/">← All messages</a></nav>
<h1>${escapeHtml(m.subject || "(no subject)")}</h1>
<p>Received ${time(m.receivedAt)}</p>
</header>
<main>
<div class="card"><dl>${headerRows}</dl></div>
${m.links.length > 0 ? `<h2>Links</h2>\n<div class="card"><ul class="links">${links}</ul></div>` : ""}
${
  m.html === null
    ? ""
    : `<h2>HTML</h2>
<iframe title="The message's HTML part" src="/messages/${escapeHtml(m.id)}/html" sandbox="allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation"></iframe>`
}
<h2>Text</h2>
<div class="card"><pre>${linkify(m.text)}</pre></div>
<h2>Raw MIME</h2>
<p class="meta"><a href="/messages/${escapeHtml(m.id)}/raw">Download the message (.eml)</a></p>
<div class="card"><pre>${escapeHtml(m.raw)}</pre></div>
</main>`,
  );
}

/**
 * The headers the message's own HTML is served with: no script, no fetch, no form, no plugin;
 * images only inline; and the CSP's own sandbox, so opened directly it is as locked as in the
 * frame. Its links open in the top window (`<base target="_top">`), after a click only.
 */
export const messageHtmlHeaders = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; frame-ancestors 'self'; sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** The message's HTML with its links sent to the top window. */
export function messageHtml(m: StoredMessage): string {
  return `<base target="_top">${m.html ?? ""}`;
}

export function notFoundPage(): string {
  return page("Not found", '<main><h1>Not found</h1><p><a href="/">All messages</a></p></main>');
}

import { describe, expect, it } from "vitest";
import { api, errorCode, snapshot, world } from "./helpers.ts";
import { fixture, indexed, search, sendRaw, uploadText } from "./knowledge.ts";

/**
 * Knowledge documents through the API (docs/2026-12-06-knowledge.md): each format, versions,
 * deletion, refusals that change nothing, citations that open their passage.
 */

const HANDBOOK = `# Harbor handbook

Intro text for the handbook.

## Billing

### Refunds

A customer may ask for a refund within 30 days. The quartermaster signs refunds above 500 dollars.

## Security

Passwords are hashed with PBKDF2 and sessions expire after fifteen minutes of quiet.
`;

describe("uploading each format", () => {
  it("Markdown: passages under their heading path, found and cited", async () => {
    const w = await world();
    const doc = await uploadText(w.owner.token, w.projectId, "handbook.md", HANDBOOK);
    expect(doc.version).toBe(1);
    await indexed(w.member.token, doc.id);
    const [hit] = await search(w.member.token, w.projectId, "who signs large refunds?");
    expect(hit?.documentId).toBe(doc.id);
    expect(hit?.heading).toBe("Harbor handbook › Billing › Refunds");
    expect(hit?.text).toContain("quartermaster signs refunds");
    expect(hit?.quote).toContain("quartermaster");
    // The citation opens its passage.
    const opened = await api<{
      passages: { chunkId: string; text: string; start: number }[];
      text: string;
    }>("GET", `/api/documents/${doc.id}/content?chunkId=${hit?.chunkId}&version=1`, {
      token: w.member.token,
    });
    expect(opened.status).toBe(200);
    expect(opened.body.passages).toHaveLength(1);
    const passage = opened.body.passages[0];
    expect(passage?.text).toBe(hit?.text);
    expect(opened.body.text.slice(passage?.start ?? 0)).toContain("quartermaster signs");
  });

  it("HTML: scripts and styles dropped, headings kept, entities decoded", async () => {
    const w = await world();
    const html = `<!doctype html><html><head><title>x</title><style>.zebrastyle{}</style></head>
      <body><script>var zebrascript = 1;</script><h1>Plans</h1><p>The Team plan costs 12&nbsp;dollars &amp; includes SSO.</p>
      <nav><a href="/">Home</a> <a href="/zebranav">Pricing</a></nav>
      <h2>Limits</h2><p>Each workspace holds 40 projects.</p>
      <footer><p>© Acme · <a href="/privacy">zebrafooter privacy</a></p></footer></body></html>`;
    const doc = await uploadText(w.owner.token, w.projectId, "plans.html", html, "text/html");
    await indexed(w.owner.token, doc.id);
    const content = await api<{ text: string; passages: { heading: string }[] }>(
      "GET",
      `/api/documents/${doc.id}/content`,
      { token: w.owner.token },
    );
    expect(content.body.text).toContain("The Team plan costs 12 dollars & includes SSO.");
    expect(content.body.text).not.toContain("zebrascript");
    expect(content.body.text).not.toContain("zebrastyle");
    // The site's chrome is no part of the page's text (nor of a cited passage).
    expect(content.body.text).not.toMatch(/zebrafooter|Home|©/);
    expect(content.body.passages.map((p) => p.heading)).toEqual(["Plans", "Plans › Limits"]);
    expect(await search(w.owner.token, w.projectId, "zebrascript")).toEqual([]);
    const [hit] = await search(w.owner.token, w.projectId, "how many projects per workspace");
    expect(hit?.heading).toBe("Plans › Limits");
  });

  it("plain text as a raw body", async () => {
    const w = await world();
    const res = await sendRaw(
      "POST",
      `/api/projects/${w.projectId}/documents?name=notes.txt`,
      w.owner.token,
      "Opening hours: the harbor office opens at nine.",
      "text/plain; charset=utf-8",
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = (res.body as { id: string }).id;
    await indexed(w.owner.token, id);
    const [hit] = await search(w.owner.token, w.projectId, "when does the office open");
    expect(hit?.documentId).toBe(id);
    expect(hit?.heading).toBe("");
  });

  it("PDF (made by Ghostscript): pages as sections, text found", async () => {
    const w = await world();
    const res = await sendRaw(
      "POST",
      `/api/projects/${w.projectId}/documents?name=handbook.pdf`,
      w.owner.token,
      fixture("handbook.pdf"),
      "application/pdf",
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = (res.body as { id: string }).id;
    await indexed(w.owner.token, id);
    const [hit] = await search(w.owner.token, w.projectId, "Frankfurt region");
    expect(hit?.documentId).toBe(id);
    expect(hit?.heading).toBe("Page 2");
    expect(hit?.text).toContain("stored in the Frankfurt region");
  });
});

describe("refusals change nothing", () => {
  const refused = async (
    w: Awaited<ReturnType<typeof world>>,
    body: Uint8Array | string,
    type: string,
    status: number,
    code: string,
    message?: RegExp,
  ) => {
    const before = await snapshot();
    const res = await sendRaw(
      "POST",
      `/api/projects/${w.projectId}/documents?name=x`,
      w.owner.token,
      body,
      type,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(errorCode(res)).toBe(code);
    if (message) expect(JSON.stringify(res.body)).toMatch(message);
    expect(await snapshot()).toEqual(before);
    const list = await api<{ items: unknown[] }>("GET", `/api/projects/${w.projectId}/documents`, {
      token: w.owner.token,
    });
    expect(list.body.items).toEqual([]);
  };

  it("an encrypted PDF, a zip bomb, invalid UTF-8, a wrong type, a PDF that is not one", async () => {
    const w = await world();
    await refused(
      w,
      fixture("encrypted.pdf"),
      "application/pdf",
      400,
      "invalid_request",
      /Encrypted/,
    );
    await refused(w, fixture("bomb.pdf"), "application/pdf", 413, "payload_too_large", /expand/);
    await refused(
      w,
      new Uint8Array([0x48, 0x69, 0xff, 0xfe, 0x21]),
      "text/plain",
      400,
      "invalid_request",
      /UTF-8/,
    );
    await refused(w, "hello", "image/png", 400, "invalid_request", /Content-Type/);
    await refused(w, "just text", "application/pdf", 400, "invalid_request", /not a PDF/);
    await refused(w, "text", "text/plain; charset=latin1", 400, "invalid_request", /UTF-8/);
    await refused(w, "", "text/markdown", 400, "invalid_request");
  });

  it("oversized: 413 past 5 MiB", async () => {
    const w = await world();
    await refused(w, "a".repeat(5 * 1024 * 1024 + 1), "text/plain", 413, "payload_too_large");
  });

  it("members may not write; another org's project is 404", async () => {
    const w = await world();
    const before = await snapshot();
    const asMember = await api("POST", `/api/projects/${w.projectId}/documents`, {
      token: w.member.token,
      body: { name: "x", contentType: "text/plain", text: "x" },
    });
    expect(asMember.status).toBe(403);
    const foreign = await api("POST", `/api/projects/${w.otherProjectId}/documents`, {
      token: w.owner.token,
      body: { name: "x", contentType: "text/plain", text: "x" },
    });
    expect(foreign.status).toBe(404);
    const unknownField = await api("POST", `/api/projects/${w.projectId}/documents`, {
      token: w.owner.token,
      body: { name: "x", contentType: "text/plain", text: "x", extra: 1 },
    });
    expect(unknownField.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });
});

describe("versions and deletion", () => {
  it("a new version replaces the old one in search once indexed; its citations say which", async () => {
    const w = await world();
    const doc = await uploadText(
      w.owner.token,
      w.projectId,
      "faq.md",
      "# FAQ\n\nThe ferry leaves at noon.",
    );
    await indexed(w.owner.token, doc.id);
    const res = await api<{ version: number }>("POST", `/api/documents/${doc.id}/versions`, {
      token: w.owner.token,
      body: {
        name: "faq.md",
        contentType: "text/markdown",
        text: "# FAQ\n\nThe ferry leaves at dusk.",
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.version).toBe(2);
    await indexed(w.owner.token, doc.id);
    expect(await search(w.owner.token, w.projectId, "noon")).toEqual([]);
    const [hit] = await search(w.owner.token, w.projectId, "ferry dusk");
    expect(hit?.version).toBe(2);
    const detail = await api<{ versions: { version: number }[] }>(
      "GET",
      `/api/documents/${doc.id}`,
      {
        token: w.member.token,
      },
    );
    expect(detail.body.versions.map((v) => v.version)).toEqual([2, 1]);
    // A citation of version 1 opens as replaced.
    const old = await api("GET", `/api/documents/${doc.id}/content?version=1`, {
      token: w.owner.token,
    });
    expect(old.status).toBe(410);
  });

  it("a deletion takes the document out of search at once, and out of the quota", async () => {
    const w = await world();
    const doc = await uploadText(
      w.owner.token,
      w.projectId,
      "a.md",
      "# A\n\nThe lighthouse keeper feeds the gulls.",
    );
    await indexed(w.owner.token, doc.id);
    const used = await api<{ usedBytes: number; documents: number }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/storage`,
      { token: w.member.token },
    );
    expect(used.body).toMatchObject({ documents: 1, usedBytes: doc.bytes });
    const asMember = await api("DELETE", `/api/documents/${doc.id}`, { token: w.member.token });
    expect(asMember.status).toBe(403);
    const deleted = await api("DELETE", `/api/documents/${doc.id}`, { token: w.admin.token });
    expect(deleted.status).toBe(204);
    expect(await search(w.owner.token, w.projectId, "lighthouse gulls")).toEqual([]);
    expect((await api("GET", `/api/documents/${doc.id}`, { token: w.owner.token })).status).toBe(
      404,
    );
    const after = await api<{ usedBytes: number }>("GET", `/api/orgs/${w.orgId}/billing/storage`, {
      token: w.member.token,
    });
    expect(after.body.usedBytes).toBe(0);
  });
});

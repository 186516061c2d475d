import { describe, expect, it } from "vitest";
import { api, errorCode, project, world } from "./helpers.ts";
import { indexed, search, uploadText } from "./knowledge.ts";

/**
 * A member opening a cited passage (docs/2026-12-06-knowledge.md, "Opening a passage"):
 * `GET /api/documents/:documentId/passages/:chunkId?version=` answers the passage alone, only
 * from that document's current version, authorized in the Worker like every document route.
 */

interface Opened {
  documentId: string;
  documentName: string;
  version: number;
  chunkId: string;
  heading: string;
  text: string;
}

/** A long document: the passage opened must not carry the rest of it. */
const MANUAL = `# Lighthouse manual

## Lamps

The keeper trims the wick of the great lamp at dusk and again at midnight.

## Logbook

${"Every visitor signs the logbook with the date and the ship they came on. ".repeat(120)}

## Fog

In fog the horn sounds twice a minute until the bell buoy is heard.
`;

const open = (token: string, documentId: string, chunkId: string, query = "") =>
  api<Opened>("GET", `/api/documents/${documentId}/passages/${chunkId}${query}`, { token });

describe("a member opens a cited passage", () => {
  it("answers the passage alone (document, version, heading, text), not the document's text", async () => {
    const w = await world();
    const doc = await uploadText(w.owner.token, w.projectId, "manual.md", MANUAL);
    await indexed(w.owner.token, doc.id);
    const [hit] = await search(w.member.token, w.projectId, "when is the wick trimmed");
    expect(hit?.heading).toBe("Lighthouse manual › Lamps");
    const opened = await open(w.member.token, doc.id, hit?.chunkId ?? "", "?version=1");
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body).toEqual({
      documentId: doc.id,
      documentName: "manual.md",
      version: 1,
      chunkId: hit?.chunkId,
      heading: "Lighthouse manual › Lamps",
      text: hit?.text,
    });
    // The passage, a few hundred bytes, where the content route sends the whole manual.
    expect(JSON.stringify(opened.body)).not.toContain("logbook");
    expect(JSON.stringify(opened.body).length).toBeLessThan(600);
    expect(MANUAL.length).toBeGreaterThan(8000);
    // Without ?version=, whatever is current.
    expect((await open(w.member.token, doc.id, hit?.chunkId ?? "")).status).toBe(200);
  });

  it("is 404 for a passage of another document, another project or another org, and for an outsider", async () => {
    const w = await world();
    const doc = await uploadText(w.owner.token, w.projectId, "manual.md", MANUAL);
    const sibling = await uploadText(
      w.owner.token,
      w.projectId,
      "sibling.md",
      "# Sibling\n\nThe sibling document speaks of anchors and chains.",
    );
    const otherProjectId = await project(w.orgId, w.owner.id);
    const far = await uploadText(
      w.owner.token,
      otherProjectId,
      "far.md",
      `# Far\n\n${"Another project's text about harbours and tides, long enough to cut. ".repeat(300)}`,
    );
    const foreign = await uploadText(
      w.outsider.token,
      w.otherProjectId,
      "foreign.md",
      "# Foreign\n\nAnother org's secret mooring plan.",
    );
    for (const [token, id] of [
      [w.owner.token, doc.id],
      [w.owner.token, sibling.id],
      [w.owner.token, far.id],
      [w.outsider.token, foreign.id],
    ] as const) {
      await indexed(token, id);
    }
    const [siblingHit] = await search(w.member.token, w.projectId, "anchors chains");
    expect(siblingHit?.documentId).toBe(sibling.id);
    const farPassages = await api<{ passages: { chunkId: string }[] }>(
      "GET",
      `/api/documents/${far.id}/content`,
      { token: w.member.token },
    );
    const [foreignHit] = await search(w.outsider.token, w.otherProjectId, "mooring plan");
    // Passage ids are rows of each project's own index: the other project's reach past this
    // project's rows, the sibling's is a row of the same index but another document.
    const farChunk = farPassages.body.passages.at(-1)?.chunkId ?? "";
    expect(Number(farChunk.slice(1))).toBeGreaterThan(Number(siblingHit?.chunkId.slice(1)));
    for (const chunkId of [siblingHit?.chunkId ?? "", farChunk, "c999999", "x1", "c1;drop"]) {
      const res = await open(w.member.token, doc.id, encodeURIComponent(chunkId));
      expect(res.status, chunkId).toBe(404);
      expect(errorCode(res)).toBe("not_found");
    }
    // Another org's document: 404 to a member of this org, exactly like a missing one.
    const crossOrg = await open(w.member.token, foreign.id, foreignHit?.chunkId ?? "");
    expect(crossOrg.status).toBe(404);
    const missing = await open(w.member.token, "doc_missing", "c1");
    expect(crossOrg.body).toEqual(missing.body);
    // Someone of no org of the document's: 404 too.
    expect((await open(w.newcomer.token, doc.id, "c1")).status).toBe(404);
    expect((await open(w.outsider.token, doc.id, "c1")).status).toBe(404);
    // Its own org's member opens it.
    expect((await open(w.outsider.token, foreign.id, foreignHit?.chunkId ?? "")).status).toBe(200);
  });

  it("is 410 for a citation of a replaced version, 400 for a malformed version, 404 once the project is deleted", async () => {
    const w = await world();
    const doc = await uploadText(w.owner.token, w.projectId, "manual.md", MANUAL);
    await indexed(w.owner.token, doc.id);
    const [hit] = await search(w.member.token, w.projectId, "wick dusk midnight");
    const bad = await open(w.member.token, doc.id, hit?.chunkId ?? "", "?version=one");
    expect(bad.status).toBe(400);
    const replaced = await api<{ version: number }>("POST", `/api/documents/${doc.id}/versions`, {
      token: w.owner.token,
      body: {
        name: "manual.md",
        contentType: "text/markdown",
        text: "# Lighthouse manual\n\nThe lamp is electric now.",
      },
    });
    expect(replaced.status).toBe(201);
    await indexed(w.owner.token, doc.id);
    const gone = await open(w.member.token, doc.id, hit?.chunkId ?? "", "?version=1");
    expect(gone.status).toBe(410);
    expect(errorCode(gone)).toBe("gone");
    // The old passage is no passage of the current version either.
    expect((await open(w.member.token, doc.id, hit?.chunkId ?? "")).status).toBe(404);
    const [now] = await search(w.member.token, w.projectId, "lamp electric");
    expect((await open(w.member.token, doc.id, now?.chunkId ?? "", "?version=2")).body.text).toBe(
      now?.text,
    );
    const deleted = await api("DELETE", `/api/projects/${w.projectId}`, { token: w.owner.token });
    expect(deleted.status).toBeLessThan(300);
    expect((await open(w.member.token, doc.id, now?.chunkId ?? "", "?version=2")).status).toBe(404);
  });
});

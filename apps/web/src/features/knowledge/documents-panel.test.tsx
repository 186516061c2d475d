import type { DocumentDetail, KnowledgeDocument, KnowledgeStorage } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { toast } from "sonner";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { documentType, knowledgeApi } from "../../lib/knowledge-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { DocumentsPanel } from "./documents-panel.tsx";
import { formatBytes } from "./format.ts";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const doc = (overrides: Partial<KnowledgeDocument> = {}): KnowledgeDocument => ({
  id: "doc_1",
  projectId: "project_1",
  orgId: "org_1",
  name: "policies.md",
  contentType: "text/markdown",
  version: 1,
  bytes: 2048,
  createdBy: "u1",
  createdAt: "2026-12-06T09:00:00.000Z",
  updatedAt: "2026-12-06T09:00:00.000Z",
  indexing: { status: "ready", version: 1, done: 4, total: 4, error: null },
  ...overrides,
});

const STORAGE: KnowledgeStorage = {
  orgId: "org_1",
  usedBytes: 3 * 1024 * 1024,
  quotaBytes: 50 * 1024 * 1024,
  documents: 3,
  maxDocumentBytes: 5 * 1024 * 1024,
};

beforeEach(() => {
  vi.spyOn(knowledgeApi, "storage").mockResolvedValue(STORAGE);
});

const page = (items: KnowledgeDocument[]) => ({ items, nextCursor: null });
const file = (name: string, text = "# Hi\n\nThere.", type = "") => new File([text], name, { type });
const show = (canManage = true) =>
  renderInApp(<DocumentsPanel projectId="project_1" orgId="org_1" canManage={canManage} />);

describe("the documents panel", () => {
  it("lists documents with their indexing (progress while it runs, why it failed) and the org's storage", async () => {
    vi.spyOn(knowledgeApi, "documents").mockResolvedValue(
      page([
        doc(),
        doc({
          id: "doc_2",
          name: "pricing.pdf",
          contentType: "application/pdf",
          version: 2,
          indexing: { status: "indexing", version: 2, done: 3, total: 12, error: null },
        }),
        doc({
          id: "doc_3",
          name: "broken.html",
          contentType: "text/html",
          indexing: { status: "failed", version: 1, done: 0, total: 2, error: "indexing failed" },
        }),
      ]),
    );
    await show();
    const list = await screen.findByRole("list", { name: "Documents" });
    const rows = within(list).getAllByRole("listitem");
    expect(rows.map((row) => row.getAttribute("aria-label"))).toEqual([
      "policies.md",
      "pricing.pdf",
      "broken.html",
    ]);
    expect(rows[0]?.textContent).toContain("Markdown · 2 KB · updated Dec 6, 2026");
    expect(rows[0]?.textContent).toContain("1 version");
    expect(rows[1]?.textContent).toContain("2 versions");
    expect(within(rows[0] as HTMLElement).getByText("Ready: the assistant finds it")).toBeTruthy();
    const progress = within(rows[1] as HTMLElement).getByRole("progressbar", {
      name: "Indexing pricing.pdf",
    });
    expect(progress.getAttribute("aria-valuenow")).toBe("25");
    expect(progress.getAttribute("aria-valuetext")).toBe("Indexing 3 of 12 passages");
    expect(rows[2]?.textContent).toContain("Indexing failed");
    expect(rows[2]?.textContent).toContain("indexing failed");
    const meter = await screen.findByTestId("storage-meter");
    expect(meter.textContent).toContain("3 MB of 50 MB used");
    expect(meter.querySelector("meter")?.getAttribute("value")).toBe(String(STORAGE.usedBytes));
  });

  it("reads the list again while a document is indexed, until it is ready", async () => {
    const documents = vi
      .spyOn(knowledgeApi, "documents")
      .mockResolvedValueOnce(
        page([doc({ indexing: { status: "queued", version: 1, done: 0, total: 0, error: null } })]),
      )
      .mockResolvedValue(page([doc()]));
    await show();
    expect(await screen.findByText("Queued")).toBeTruthy();
    await screen.findByText("Ready: the assistant finds it", undefined, { timeout: 3000 });
    const calls = documents.mock.calls.length;
    // Ready: no more reads.
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(documents.mock.calls.length).toBe(calls);
  });

  it("uploads a picked file with the type its name says, and refuses a format or a size before sending", async () => {
    vi.spyOn(knowledgeApi, "documents").mockResolvedValue(page([]));
    const upload = vi
      .spyOn(knowledgeApi, "uploadDocument")
      .mockResolvedValue(
        doc({ indexing: { status: "queued", version: 1, done: 0, total: 0, error: null } }),
      );
    const said = vi.spyOn(toast, "success");
    const refused = vi.spyOn(toast, "error");
    await show();
    const input = (await screen.findByTestId("upload-document")) as HTMLInputElement;
    const notes = file("notes.md");
    fireEvent.change(input, { target: { files: [notes] } });
    await waitFor(() => expect(upload).toHaveBeenCalledWith("project_1", notes, "text/markdown"));
    await waitFor(() =>
      expect(said).toHaveBeenCalledWith("policies.md added: it is being indexed."),
    );

    fireEvent.change(input, { target: { files: [file("letter.docx")] } });
    const big = file("big.txt");
    Object.defineProperty(big, "size", { value: 6 * 1024 * 1024 });
    fireEvent.change(input, { target: { files: [big] } });
    await waitFor(() => expect(refused).toHaveBeenCalledTimes(2));
    expect(refused.mock.calls.map((call) => call[0])).toEqual([
      "letter.docx: only text, Markdown, HTML and PDF files can be added.",
      `big.txt is 6 MB; a document may be at most ${formatBytes(5 * 1024 * 1024)}.`,
    ]);
    expect(upload).toHaveBeenCalledTimes(1);
  });

  it("says the server's refusal (over the quota) and changes nothing", async () => {
    vi.spyOn(knowledgeApi, "documents").mockResolvedValue(page([doc()]));
    vi.spyOn(knowledgeApi, "uploadVersion").mockRejectedValue(
      new ApiError("conflict", "The organization's documents would pass its storage quota", 409),
    );
    const refused = vi.spyOn(toast, "error");
    await show();
    const input = await screen.findByTestId("upload-New version of policies.md");
    fireEvent.change(input, { target: { files: [file("policies.md")] } });
    await waitFor(() =>
      expect(refused).toHaveBeenCalledWith(
        "The organization's documents would pass its storage quota.",
      ),
    );
  });

  it("shows a document's versions when asked", async () => {
    vi.spyOn(knowledgeApi, "documents").mockResolvedValue(page([doc({ version: 2 })]));
    const detail: DocumentDetail = {
      ...doc({ version: 2 }),
      versions: [2, 1].map((version) => ({
        version,
        contentType: "text/markdown" as const,
        bytes: 1000 * version,
        textChars: 900,
        sha256: "x",
        createdBy: "u1",
        createdAt: "2026-12-06T09:00:00.000Z",
      })),
    };
    const read = vi.spyOn(knowledgeApi, "document").mockResolvedValue(detail);
    await show();
    const summary = await screen.findByText("2 versions");
    expect(read).not.toHaveBeenCalled();
    const details = summary.closest("details") as HTMLDetailsElement;
    details.open = true;
    fireEvent(details, new Event("toggle"));
    const list = await screen.findByRole("list", { name: "Versions of policies.md" });
    expect(
      within(list)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual([
      expect.stringMatching(/^Version 2 \(current\) · Markdown · 2 KB · /),
      expect.stringMatching(/^Version 1 · Markdown · 1000 B · /),
    ]);
  });

  it("deletes only after a confirmation that names the document", async () => {
    vi.spyOn(knowledgeApi, "documents").mockResolvedValue(page([doc()]));
    const remove = vi.spyOn(knowledgeApi, "deleteDocument").mockResolvedValue(undefined);
    await show();
    fireEvent.click(await screen.findByRole("button", { name: "Delete policies.md" }));
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toContain("Delete policies.md?");
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(remove).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Delete policies.md" }));
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", {
        name: "Delete document",
      }),
    );
    await waitFor(() => expect(remove).toHaveBeenCalledWith("doc_1"));
  });

  it("offers a member no upload and no deletion", async () => {
    vi.spyOn(knowledgeApi, "documents").mockResolvedValue(page([doc()]));
    await show(false);
    await screen.findByRole("list", { name: "Documents" });
    expect(screen.queryByRole("button", { name: /Add document|New version|Delete/ })).toBeNull();
    expect(screen.queryByTestId("upload-document")).toBeNull();
  });
});

describe("documentType", () => {
  it("goes by the extension first (a .md file has no type in most browsers), then by the file's type", () => {
    expect(documentType({ name: "a.MD", type: "" })).toBe("text/markdown");
    expect(documentType({ name: "a.htm", type: "" })).toBe("text/html");
    expect(documentType({ name: "scan", type: "application/pdf" })).toBe("application/pdf");
    expect(documentType({ name: "a.docx", type: "application/msword" })).toBeNull();
  });
});

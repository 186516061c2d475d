import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api } from "../../lib/api.ts";
import { openSource } from "./chats.tsx";

afterEach(() => {
  vi.restoreAllMocks();
});

const citation = {
  documentId: "doc_1",
  documentName: "policies.md",
  version: 2,
  heading: "Policies › Returns",
  quote: "Returns are accepted within 30 days.",
  chunkId: "c17",
};

describe("opening a reply's source", () => {
  it("reads the cited passage alone through the passage route, with the version it cites", async () => {
    const get = vi.spyOn(api, "get").mockResolvedValue({
      documentId: "doc_1",
      documentName: "policies.md",
      version: 2,
      chunkId: "c17",
      heading: "Policies › Returns",
      text: "Returns are accepted within 30 days. Keep the receipt.",
    });
    await expect(openSource(citation)).resolves.toEqual({
      documentName: "policies.md",
      version: 2,
      heading: "Policies › Returns",
      text: "Returns are accepted within 30 days. Keep the receipt.",
    });
    // Never the content route: it sends the whole document (up to 2 MiB) for one passage.
    expect(get).toHaveBeenCalledExactlyOnceWith("/api/documents/doc_1/passages/c17?version=2");
  });

  it("says why when the document was replaced (410), in the server's words", async () => {
    vi.spyOn(api, "get").mockRejectedValue(
      new ApiError("gone", "Version 2 was replaced: the document is at version 3", 410),
    );
    await expect(openSource(citation)).rejects.toThrow(
      "Version 2 was replaced: the document is at version 3",
    );
  });
});

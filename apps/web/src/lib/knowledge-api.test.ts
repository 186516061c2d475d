import { describe, expect, it, vi } from "vitest";
import { type ApiClient, ApiError } from "./api.ts";
import { createKnowledgeApi } from "./knowledge-api.ts";

const client = { accessToken: vi.fn(async () => "tok") } as unknown as ApiClient;

describe("a document's upload", () => {
  it("sends the file as the raw body with its type, its name in ?name=, and the bearer token", async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
      seen.push({ url: String(url), init: init ?? {} });
      return new Response(JSON.stringify({ id: "doc_1", name: "a b.md" }), { status: 201 });
    });
    const api = createKnowledgeApi(client, fetch as unknown as typeof globalThis.fetch);
    const file = new File(["# Hi"], "a b.md");
    await expect(api.uploadDocument("project_1", file, "text/markdown")).resolves.toMatchObject({
      id: "doc_1",
    });
    expect(seen[0]?.url).toBe("/api/projects/project_1/documents?name=a%20b.md");
    expect(seen[0]?.init.method).toBe("POST");
    expect(seen[0]?.init.body).toBe(file);
    expect(seen[0]?.init.headers).toEqual({
      authorization: "Bearer tok",
      "content-type": "text/markdown",
    });
  });

  it("turns a refusal into the server's code and words, and no answer into a network error", async () => {
    const refusing = createKnowledgeApi(
      client,
      (async () =>
        new Response(JSON.stringify({ error: { code: "payload_too_large", message: "Too big" } }), {
          status: 413,
        })) as unknown as typeof globalThis.fetch,
    );
    const error = await refusing
      .uploadVersion("doc_1", new File(["x"], "x.pdf"), "application/pdf")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: "payload_too_large", message: "Too big", status: 413 });
    const offline = createKnowledgeApi(client, (async () => {
      throw new TypeError("failed");
    }) as unknown as typeof globalThis.fetch);
    await expect(
      offline.uploadDocument("p", new File(["x"], "x.txt"), "text/plain"),
    ).rejects.toMatchObject({ code: "network" });
  });
});

import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatView } from "./chat-view.tsx";
import { type CitationView, readCitations } from "./reply-sources.tsx";
import { fakeChat, reply } from "./test-chat.ts";

afterEach(cleanup);

const RETURNS: CitationView = {
  documentId: "doc_1",
  documentName: "policies.md",
  version: 2,
  heading: "Policies › Returns",
  quote: "Items may be returned within 45 days.",
  chunkId: "c3",
};
const SHIPPING: CitationView = {
  ...RETURNS,
  heading: "Policies › Shipping",
  quote: "Parcels ship on Tuesdays.",
  chunkId: "c4",
};

describe("readCitations", () => {
  it("reads the agent's citations and drops malformed ones", () => {
    expect(readCitations({ citations: [RETURNS, SHIPPING] })).toEqual([RETURNS, SHIPPING]);
    expect(
      readCitations({
        citations: [
          { ...RETURNS, version: "2" },
          { ...RETURNS, documentId: 7 },
          { ...RETURNS, version: 0 },
          null,
          "c3",
          { ...SHIPPING, heading: undefined },
        ],
      }),
    ).toEqual([{ ...SHIPPING, heading: "" }]);
    expect(readCitations({ citations: "none" })).toEqual([]);
    expect(readCitations(undefined)).toEqual([]);
  });
});

describe("a reply's sources", () => {
  it("lists each source under the reply and opens its passage, the quote marked, then closes back to it", async () => {
    const openSource = vi.fn(async (citation: CitationView) => ({
      documentName: citation.documentName,
      version: citation.version,
      heading: citation.heading,
      text: "Returns. Items may be returned within 45 days. Keep the receipt.",
    }));
    render(
      <ChatView
        chat={fakeChat({
          messages: [reply("a1", "Within 45 days.", { citations: [RETURNS, SHIPPING] })],
        })}
        label="Chat"
        openSource={openSource}
      />,
    );
    const sources = screen.getByRole("list", { name: "Sources" });
    const buttons = within(sources).getAllByRole("button");
    expect(buttons.map((b) => b.textContent)).toEqual([
      "1policies.md › Policies › Returns",
      "2policies.md › Policies › Shipping",
    ]);
    fireEvent.click(buttons[0] as HTMLElement);
    const dialog = await screen.findByRole("dialog", { name: "policies.md" });
    expect(dialog.textContent).toContain("Version 2 · Policies › Returns");
    await waitFor(() =>
      expect(within(dialog).getByTestId("source-passage").textContent).toBe(
        "Returns. Items may be returned within 45 days. Keep the receipt.",
      ),
    );
    expect(dialog.querySelector("mark")?.textContent).toBe(RETURNS.quote);
    expect(openSource).toHaveBeenCalledWith(RETURNS);
    fireEvent.click(within(dialog).getByRole("button", { name: "Close" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(document.activeElement).toBe(buttons[0]);
  });

  it("shows a Markdown passage as reading text: no raw marks, no HTML footer, nothing injected", async () => {
    const markdown = [
      "## Returns",
      "",
      "Items may be **returned** within 45 days,",
      "with the [receipt](https://shop.example/receipt).",
      "",
      "```html",
      "<b>kept</b>",
      "```",
      '<footer><a href="/privacy">Privacy</a> · © Acme</footer>',
      '<img src=x onerror="window.injected = true">',
    ].join("\n");
    render(
      <ChatView
        chat={fakeChat({
          messages: [
            reply("a1", "Within 45 days.", {
              citations: [
                {
                  ...RETURNS,
                  quote: "Items may be **returned** within 45 days, with the receipt.",
                },
              ],
            }),
          ],
        })}
        label="Chat"
        openSource={async (citation) => ({ ...citation, text: markdown })}
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: /Returns/ }));
    const dialog = await screen.findByRole("dialog");
    const passage = within(dialog).getByTestId("source-passage");
    await waitFor(() => expect(passage.textContent).toContain("Returns\n\nItems may be returned"));
    expect(passage.textContent).toBe(
      "Returns\n\nItems may be returned within 45 days,\nwith the receipt.\n\n<b>kept</b>",
    );
    expect(dialog.querySelector("mark")?.textContent).toBe(
      "Items may be returned within 45 days,\nwith the receipt.",
    );
    expect(passage.querySelector("img, a, b, footer")).toBeNull();
    expect((window as { injected?: boolean }).injected).toBeUndefined();
  });

  it("keeps the reply's own quote when the passage cannot be opened (a replaced version)", async () => {
    render(
      <ChatView
        chat={fakeChat({ messages: [reply("a1", "Tuesdays.", { citations: [SHIPPING] })] })}
        label="Chat"
        openSource={() =>
          // As the API words it: a clause, no full stop of its own.
          Promise.reject(new Error("Version 2 was replaced: the document is at version 3"))
        }
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: /Shipping/ }));
    const dialog = await screen.findByRole("dialog");
    expect((await within(dialog).findByRole("alert")).textContent).toMatch(
      /Version 2 was replaced: the document is at version 3\. The quote this reply used:/,
    );
    expect(within(dialog).getByTestId("source-passage").textContent).toBe(SHIPPING.quote);
  });

  it("shows no sources for a reply without citations, nor while a reply streams", () => {
    const { rerender } = render(
      <ChatView chat={fakeChat({ messages: [reply("a1", "Hello.")] })} label="Chat" />,
    );
    expect(screen.queryByRole("list", { name: "Sources" })).toBeNull();
    rerender(
      <ChatView
        chat={fakeChat({
          busy: true,
          messages: [reply("a1", "Within", { citations: [RETURNS] })],
        })}
        label="Chat"
      />,
    );
    expect(screen.queryByRole("list", { name: "Sources" })).toBeNull();
  });
});

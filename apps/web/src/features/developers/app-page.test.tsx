import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { renderInApp } from "../../test/render.tsx";
import { AppPreview } from "./app-preview.tsx";
import { developersApi } from "./developers-api.ts";
import { EmbedSnippet } from "./embed-snippet.tsx";
import { EndUsers } from "./end-users.tsx";
import { APP, END_USER } from "./fixtures.ts";
import { snippetsFor } from "./snippets.ts";

vi.mock("./embed-script.ts", () => ({ loadEmbedScript: vi.fn(async () => undefined) }));

beforeEach(() => {
  vi.spyOn(developersApi, "endUsers").mockResolvedValue({
    items: [
      END_USER,
      {
        ...END_USER,
        id: "eu_2",
        externalId: "parley:preview:usr_1",
        name: "Owner (preview)",
        usage: { requests: 0, priceMicros: 0 },
      },
    ],
    nextCursor: null,
  });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("the embed snippet", () => {
  it("names the app and Parley's script, and the token endpoint the page asks", async () => {
    const snippets = snippetsFor(APP, "https://parley.example/");
    expect(snippets.scriptTag).toBe(
      [
        '<script type="module" src="https://parley.example/embed/parley-assistant.js"></script>',
        `<parley-assistant app-id="${APP.id}" token-url="/parley-token"></parley-assistant>`,
      ].join("\n"),
    );
    expect(snippets.react).toContain(`appId="${APP.id}"`);
    expect(snippets.serverWithKey).toContain(
      `https://parley.example/api/apps/${APP.id}/end-user-tokens`,
    );
    expect(snippets.serverWithSecret).toContain('.setIssuer("https://shop.example.com")');
    await renderInApp(<EmbedSnippet app={APP} parleyUrl="https://parley.example" />);
    expect(screen.getByText(/On your pages at https:\/\/shop.example.com/)).toBeTruthy();
    expect(screen.getByRole("button", { name: "Copy snippet" })).toBeTruthy();
  });

  it("asks for an origin first when the app lists none", async () => {
    await renderInApp(<EmbedSnippet app={{ ...APP, allowedOrigins: [] }} parleyUrl="https://p" />);
    expect(screen.getByText(/Add your site's origin under Settings first/)).toBeTruthy();
  });
});

describe("the live preview", () => {
  it("starts the real element inline, its tokens the viewer's preview end user's", async () => {
    const preview = vi.spyOn(developersApi, "previewToken").mockResolvedValue({
      accessToken: "eu.token",
      expiresIn: 900,
      endUser: { id: "eu_9", externalId: "parley:preview:usr_1" },
    });
    await renderInApp(<AppPreview app={APP} parleyUrl="https://parley.example" />);
    expect(document.querySelector("parley-assistant")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Start the preview" }));
    const element = (await waitFor(() => {
      const found = document.querySelector("parley-assistant");
      if (!found) throw new Error("not yet");
      return found;
    })) as HTMLElement & { getToken: () => Promise<unknown> };
    expect(element.getAttribute("app-id")).toBe(APP.id);
    expect(element.getAttribute("mode")).toBe("inline");
    expect(element.getAttribute("parley-url")).toBe("https://parley.example");
    expect(await element.getToken()).toEqual({ accessToken: "eu.token", expiresIn: 900 });
    expect(preview).toHaveBeenCalledWith(APP.id);
  });
  it("brings the End users list up to date as the preview is used, without a reload", async () => {
    vi.spyOn(developersApi, "previewToken").mockResolvedValue({
      accessToken: "eu.token",
      expiresIn: 900,
      endUser: { id: "eu_9", externalId: "parley-preview:usr_1" },
    });
    const list = vi.mocked(developersApi.endUsers);
    await renderInApp(
      <>
        <AppPreview app={APP} parleyUrl="https://parley.example" />
        <EndUsers appId={APP.id} />
      </>,
    );
    await screen.findByRole("table");
    const before = list.mock.calls.length;
    fireEvent.click(screen.getByRole("button", { name: "Start the preview" }));
    const element = await waitFor(() => {
      const found = document.querySelector("parley-assistant");
      if (!found) throw new Error("not yet");
      return found;
    });
    // The element is ready (its end user exists): the list is asked again.
    element.dispatchEvent(new CustomEvent("parley-ready", { bubbles: true, composed: true }));
    await waitFor(() => expect(list.mock.calls.length).toBe(before + 1));
    // Focus leaves the preview after a chat: asked again.
    element.dispatchEvent(new FocusEvent("focusout", { bubbles: true }));
    await waitFor(() => expect(list.mock.calls.length).toBe(before + 2));
  });
});

describe("EndUsers", () => {
  it("lists end users with their calls and cost, the preview marked", async () => {
    await renderInApp(<EndUsers appId={APP.id} />);
    const table = await screen.findByRole("table");
    const rows = within(table).getAllByRole("row");
    expect(rows[1]?.textContent).toContain("Ada");
    expect(rows[1]?.textContent).toContain("shop-user-ada");
    expect(rows[1]?.textContent).toContain("3");
    expect(rows[1]?.textContent).toContain("$0.001234");
    expect(within(rows[2] as HTMLElement).getByText("preview")).toBeTruthy();
  });

  it("erases one by its Parley id in the body, after asking", async () => {
    const erase = vi.spyOn(developersApi, "eraseEndUser").mockResolvedValue({ id: "er_1" });
    await renderInApp(<EndUsers appId={APP.id} />);
    fireEvent.click(await screen.findByRole("button", { name: "Erase Ada" }));
    const confirm = await screen.findByRole("alertdialog");
    fireEvent.click(within(confirm).getByRole("button", { name: "Erase end user" }));
    await waitFor(() => expect(erase).toHaveBeenCalledWith(APP.id, "eu_1"));
    expect(await screen.findByText("Erasing")).toBeTruthy();
  });
});

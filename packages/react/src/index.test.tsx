import { apiError, fakeNetwork, json } from "@parley/embed-core/testing";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ParleyAssistant } from "./index.tsx";

const PARLEY = "https://parley.example";

function parley(showCost: boolean) {
  const network = fakeNetwork((call) => {
    if (call.path === "/parley-token" && !call.url.startsWith(PARLEY)) return json({ token: "t" });
    if (call.path === "/api/embed/token")
      return json({
        accessToken: "eu-1",
        expiresIn: 900,
        endUser: { id: "eu_1", externalId: "u" },
      });
    if (call.headers.authorization !== "Bearer eu-1") return apiError(401, "unauthorized", "");
    if (call.path === "/api/embed/me")
      return json({
        endUser: { id: "eu_1", externalId: "u", name: null },
        app: { id: "app_1", name: "Acme help", showCost, projects: [{ id: "prj_1", name: "P" }] },
      });
    if (call.path.startsWith("/api/embed/sessions?")) return json({ items: [], nextCursor: null });
    return apiError(404, "not_found", "Not found");
  });
  vi.stubGlobal("fetch", network.fetch);
  return network;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("ParleyAssistant", () => {
  it("renders into a shadow root on its own element, with the host's React", async () => {
    const network = parley(false);
    const onReady = vi.fn();
    const { container } = render(
      <ParleyAssistant
        appId="app_1"
        parleyUrl={PARLEY}
        tokenUrl="/parley-token"
        mode="inline"
        theme="dark"
        onReady={onReady}
        className="h-96"
      />,
    );
    const host = container.firstElementChild as HTMLElement;
    await waitFor(() => expect(onReady).toHaveBeenCalledTimes(1));
    // Nothing in the app's DOM: the assistant is all in the shadow root.
    expect(host.className).toBe("h-96");
    expect(host.childElementCount).toBe(0);
    const shadow = host.shadowRoot as ShadowRoot;
    await waitFor(() => expect(shadow.querySelector("h2")?.textContent).toBe("Acme help"));
    expect(shadow.querySelector(".parley-root")?.classList.contains("dark")).toBe(true);
    expect(shadow.adoptedStyleSheets).toHaveLength(1);
    expect(network.calls.find((c) => c.path === "/parley-token")?.credentials).toBe("include");
  });

  it("opens and closes the launcher with aria-expanded, Esc and focus back", async () => {
    parley(false);
    const answers: string[] = [];
    const app = () => (
      <ParleyAssistant
        appId="app_1"
        parleyUrl={PARLEY}
        getToken={async () => {
          answers.push("asked");
          return { accessToken: "eu-1", expiresIn: 900 };
        }}
      />
    );
    const { container, rerender } = render(app());
    const shadow = await waitFor(() => {
      const root = (container.firstElementChild as HTMLElement).shadowRoot;
      if (!root?.querySelector("button[aria-expanded]")) throw new Error("no launcher yet");
      return root;
    });
    const launcher = shadow.querySelector("button[aria-expanded]") as HTMLButtonElement;
    fireEvent.click(launcher);
    expect(launcher.getAttribute("aria-expanded")).toBe("true");
    const dialog = shadow.querySelector('[role="dialog"]') as HTMLElement;
    expect(dialog.hidden).toBe(false);
    const box = await waitFor(() => {
      const found = dialog.querySelector("textarea");
      if (!found) throw new Error("no message box yet");
      return found;
    });
    fireEvent.keyDown(box, { key: "Escape" });
    expect(launcher.getAttribute("aria-expanded")).toBe("false");
    expect(dialog.hidden).toBe(true);
    expect(shadow.activeElement).toBe(launcher);

    // An app re-rendering with a new inline getToken keeps the same assistant and token.
    rerender(app());
    expect(shadow.querySelector("button[aria-expanded]")).toBe(launcher);
    expect(answers).toHaveLength(1);
  });
});

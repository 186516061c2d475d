import {
  createEmbedClient,
  type EmbedClient,
  type EmbedError,
  type EmbedMe,
  type GetToken,
  tokenUrlSource,
} from "@parley/embed-core";
import { Assistant, type AssistantMode } from "./assistant.tsx";
import { mountInShadow } from "./mount.tsx";
import { readTheme } from "./theme.ts";

/** What `parley-ready` carries. */
export type ReadyDetail = EmbedMe;
/** What `parley-error` carries. */
export type ErrorDetail = EmbedError;

/**
 * Where this script was loaded from: the Parley origin that serves it, unless `parley-url` says
 * otherwise (a script copied to the host's own CDN).
 */
const scriptOrigin = (() => {
  try {
    const origin = new URL(import.meta.url).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
})();

const ATTRIBUTES = ["app-id", "token-url", "parley-url", "mode", "theme", "project-id"] as const;

/**
 * `<parley-assistant app-id="app_..." token-url="/parley-token">`: Parley's assistant on any page.
 *
 * Attributes: `app-id` (required), `token-url` (a URL of the page's own origin that answers a
 * POST, sent with the page's cookies, with `{ token }` or `{ accessToken, expiresIn }`) or the
 * `getToken` property (a function returning the same), `parley-url` (default: this script's
 * origin), `mode` (`launcher`, the default, or `inline`), `theme` (`light`, `dark` or `auto`, the
 * default), `project-id` (where new chats go; default the app's first project).
 *
 * Events (bubbling, composed CustomEvents): `parley-ready` with `{ endUser, app }` once the end
 * user is known, `parley-error` with an EmbedError `{ code, status, message }` for any failure.
 */
export class ParleyAssistantElement extends HTMLElement {
  static observedAttributes = [...ATTRIBUTES];

  #getToken: GetToken | undefined;
  #mounted: ReturnType<typeof mountInShadow> | null = null;
  #client: { key: string; client: EmbedClient } | null = null;
  /** Counts `getToken` assignments: a new function is a new client (and a new token). */
  #tokenGeneration = 0;
  #reported: string | null = null;

  /** A token source in code, instead of `token-url` (it wins when both are there). */
  get getToken(): GetToken | undefined {
    return this.#getToken;
  }

  set getToken(value: GetToken | undefined) {
    this.#getToken = value;
    this.#tokenGeneration += 1;
    this.#update();
  }

  connectedCallback(): void {
    // A page may set `getToken` before this script defined the element: that set an own
    // property on the plain element, which would hide the accessor. Take it over.
    if (Object.hasOwn(this, "getToken")) {
      const value = (this as { getToken?: GetToken }).getToken;
      delete (this as { getToken?: GetToken }).getToken;
      this.#getToken = value;
      this.#tokenGeneration += 1;
    }
    this.#update();
  }

  disconnectedCallback(): void {
    this.#mounted?.unmount();
    this.#mounted = null;
  }

  attributeChangedCallback(): void {
    if (this.isConnected) this.#update();
  }

  #emit(type: "parley-ready" | "parley-error", detail: ReadyDetail | ErrorDetail): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  /** The client for the current settings; a new one only when they changed. */
  #clientFor(): EmbedClient | EmbedError {
    const appId = this.getAttribute("app-id");
    const tokenUrl = this.getAttribute("token-url");
    const parleyUrl = this.getAttribute("parley-url") ?? scriptOrigin;
    const misconfigured = (message: string): EmbedError => ({
      code: "invalid_request",
      status: 0,
      message,
    });
    if (!appId) return misconfigured("<parley-assistant> needs an app-id attribute.");
    if (!this.#getToken && !tokenUrl)
      return misconfigured(
        "<parley-assistant> needs a token-url attribute or a getToken property.",
      );
    if (!parleyUrl) return misconfigured("<parley-assistant> needs a parley-url attribute.");
    const source = this.#getToken ? `getToken#${this.#tokenGeneration}` : tokenUrl;
    const key = JSON.stringify([appId, parleyUrl, source]);
    if (this.#client?.key === key) return this.#client.client;
    const getToken =
      this.#getToken ??
      tokenUrlSource(new URL(tokenUrl ?? "", document.baseURI).href, (input, init) =>
        fetch(input, init),
      );
    const client = createEmbedClient({ appId, parleyUrl, getToken });
    this.#client = { key, client };
    return client;
  }

  #update(): void {
    if (!this.isConnected) return;
    const client = this.#clientFor();
    if (!("me" in client)) {
      // Said once per distinct problem, not on every attribute change.
      if (this.#reported !== client.message) {
        this.#reported = client.message;
        this.#emit("parley-error", client);
      }
      this.#mounted?.unmount();
      this.#mounted = null;
      return;
    }
    this.#reported = null;
    this.#mounted ??= mountInShadow(this);
    const mode: AssistantMode = this.getAttribute("mode") === "inline" ? "inline" : "launcher";
    const projectId = this.getAttribute("project-id");
    this.#mounted.render(
      <Assistant
        // Other settings are another assistant, with fresh state.
        key={`${this.#client?.key}|${mode}|${projectId ?? ""}`}
        client={client}
        mode={mode}
        theme={readTheme(this.getAttribute("theme"))}
        {...(projectId ? { projectId } : {})}
        onReady={(me) => this.#emit("parley-ready", me)}
        onError={(error) => this.#emit("parley-error", error)}
      />,
    );
  }
}

declare global {
  interface HTMLElementTagNameMap {
    "parley-assistant": ParleyAssistantElement;
  }
}

/** Defines `<parley-assistant>` unless the page already has it (the script loaded twice). */
export function defineParleyAssistant(name = "parley-assistant"): void {
  if (!customElements.get(name)) customElements.define(name, ParleyAssistantElement);
}

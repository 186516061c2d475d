/**
 * @parley/react: Parley's embeddable assistant as a React component, with the host app's own
 * React (a peer dependency). The same UI and core as the `<parley-assistant>` script: it renders
 * into a shadow root on its own element, so the app's CSS and the assistant's cannot meet.
 *
 *   <ParleyAssistant appId="app_..." tokenUrl="/parley-token" parleyUrl="https://parley.example" />
 */
import {
  Assistant,
  type AssistantMode,
  assistantShadowRoot,
  type ThemeChoice,
} from "@parley/embed";
import {
  createEmbedClient,
  type EmbedError,
  type EmbedMe,
  type GetToken,
  tokenUrlSource,
} from "@parley/embed-core";
import { type CSSProperties, useEffect, useMemo, useRef, useState } from "react";
import { createPortal } from "react-dom";

export type { EmbedError, EmbedMe, GetToken, TokenAnswer } from "@parley/embed-core";

export interface ParleyAssistantProps {
  appId: string;
  /** Parley's origin, e.g. `https://parley.example`. */
  parleyUrl: string;
  /**
   * A URL of the app's own origin answering a POST (sent with the app's cookies) with
   * `{ token }` or `{ accessToken, expiresIn }`. Or give `getToken`.
   */
  tokenUrl?: string;
  /** Returns the same answers as `tokenUrl`; called again for each new token. */
  getToken?: GetToken;
  /** `launcher` (default): a floating button and its panel; `inline`: fills this element. */
  mode?: AssistantMode;
  /** `auto` (default) follows the system. */
  theme?: ThemeChoice;
  /** Where new chats go; the app's first project by default. */
  projectId?: string;
  onReady?: (me: EmbedMe) => void;
  onError?: (error: EmbedError) => void;
  /** On the host element (inline mode: give it a height). */
  className?: string;
  style?: CSSProperties;
}

/**
 * The assistant. A new `appId`, `parleyUrl` or token source (`tokenUrl`, or switching between it
 * and `getToken`) starts a new one; a new `getToken` function identity does not (apps pass
 * inline functions), the latest one is called.
 */
export function ParleyAssistant({
  appId,
  parleyUrl,
  tokenUrl,
  getToken,
  mode = "launcher",
  theme = "auto",
  projectId,
  onReady,
  onError,
  className,
  style,
}: ParleyAssistantProps) {
  const host = useRef<HTMLDivElement>(null);
  const [shadow, setShadow] = useState<ShadowRoot | null>(null);
  // After mount: a shadow root is the browser's, not something to render on a server.
  useEffect(() => {
    if (host.current) setShadow(assistantShadowRoot(host.current));
  }, []);

  const latestGetToken = useRef(getToken);
  latestGetToken.current = getToken;
  const hasGetToken = getToken !== undefined;
  const client = useMemo(() => {
    const source: GetToken | null = hasGetToken
      ? () => (latestGetToken.current as GetToken)()
      : tokenUrl
        ? tokenUrlSource(new URL(tokenUrl, document.baseURI).href, (input, init) =>
            fetch(input, init),
          )
        : null;
    return source ? createEmbedClient({ appId, parleyUrl, getToken: source }) : null;
  }, [appId, parleyUrl, tokenUrl, hasGetToken]);

  const reportMissing = useRef(onError);
  reportMissing.current = onError;
  useEffect(() => {
    if (!client)
      reportMissing.current?.({
        code: "invalid_request",
        status: 0,
        message: "ParleyAssistant needs a tokenUrl or a getToken.",
      });
  }, [client]);

  return (
    <div ref={host} className={className} style={style}>
      {shadow && client
        ? createPortal(
            <Assistant
              key={`${mode}|${projectId ?? ""}`}
              client={client}
              mode={mode}
              theme={theme}
              {...(projectId ? { projectId } : {})}
              {...(onReady ? { onReady } : {})}
              {...(onError ? { onError } : {})}
            />,
            shadow,
          )
        : null}
    </div>
  );
}

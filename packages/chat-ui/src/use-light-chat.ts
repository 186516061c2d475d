import { useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import { LightChat, type LightChatOptions, type LightChatSnapshot } from "./light-chat.ts";
import type { ParleyChatState } from "./use-parley-chat.ts";

export type UseLightChatOptions = Omit<LightChatOptions, "openSocket" | "makeId">;

/** The light chat's state for ChatView, plus whether its transcript is in. */
export type LightChatState = ParleyChatState & Pick<LightChatSnapshot, "phase" | "loadError">;

/**
 * `useParleyChat` without the AI SDK (see light-chat.ts): the same `ParleyChatState`, for the
 * embeddable assistant. It does not suspend: `phase` is `loading` until the transcript is in and
 * `failed` (with `loadError`) when it or the first connect ticket could not be had, so the caller
 * shows its own "Connecting…" and error. A new `agent`/`name` is a new chat.
 */
export function useLightChat(options: UseLightChatOptions): LightChatState {
  // Callers pass inline functions; a new identity must not reconnect or refetch.
  const latest = useRef(options);
  latest.current = options;
  const { agent, name, host } = options;
  const chat = useMemo(
    () =>
      new LightChat({
        agent,
        name,
        host,
        connectTicket: () => latest.current.connectTicket(),
        loadMessages: () => latest.current.loadMessages(),
      }),
    [agent, name, host],
  );
  useEffect(() => {
    chat.start();
    return () => chat.dispose();
  }, [chat]);
  const snapshot = useSyncExternalStore(chat.subscribe, chat.getSnapshot, chat.getSnapshot);
  return {
    ...snapshot,
    send: chat.send,
    stop: chat.stop,
    regenerate: chat.regenerate,
    respondToApproval: chat.respondToApproval,
    clearRefusal: chat.clearRefusal,
  };
}

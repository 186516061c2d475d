/**
 * @parley/embed: the embeddable assistant's UI, shared by the `<parley-assistant>` script
 * (parley-assistant.ts, built with Preact in React's place) and `@parley/react` (the host's React).
 * The shell (launcher, panel frame, who the end user is) is in the initial chunk; the sessions and
 * the chat (chat-ui, the AI SDK, the socket) load on first open.
 */
export { Assistant, type AssistantMode, type AssistantProps } from "./assistant.tsx";
export { defineParleyAssistant, ParleyAssistantElement } from "./element.tsx";
export { assistantShadowRoot, mountInShadow } from "./mount.tsx";
export { adoptStyles, shadowCss } from "./shadow-css.ts";
export { readTheme, type ThemeChoice, useDark } from "./theme.ts";

/**
 * @parley/chat-ui: Parley's chat as components, for the web app now and the embeddable assistant
 * (a web component in a shadow DOM) later. Styled with Tailwind utilities over the semantic tokens
 * of `./theme.css`; the importing stylesheet also imports `./chat.css` (it points Tailwind at this
 * package and at streamdown). React, the AI SDK and agents are the app's; the markdown renderer
 * and the code highlighter load lazily, so the package's initial JS stays small.
 */

/** A connected chat in one element: useParleyChat + ChatView under Suspense ("Connecting…"). */
export { AgentChat, type AgentChatProps } from "./agent-chat.tsx";
/** One transcript item: a person's message as plain text, or a reply with its parts and footer. */
export { ChatMessage, type ChatMessageProps, FailedReply } from "./chat-message.tsx";
/** The full-height chat: scrolling transcript (stick-to-bottom), thinking indicator, composer. */
export { ChatView, type ChatViewProps } from "./chat-view.tsx";
/** Joins class names with Tailwind conflict resolution, for `className` overrides. */
export { cn } from "./cn.ts";
/** The message box: Enter sends, Shift+Enter new line, Esc stops; disabled with a reason. */
export { Composer } from "./composer.tsx";
/** Integer micro-dollars as dollars (one rule: format.ts), as typed in a field, and parsed back. */
export {
  type DollarsError,
  dollarsInput,
  formatMicros,
  MICROS_PER_DOLLAR,
  type ParsedDollars,
  parseDollars,
  parseDollarsToMicros,
} from "./format.ts";
/** Streamed markdown for replies (lazy streamdown), and plain text for what people type. */
export { Markdown, PlainText, preloadMarkdown } from "./markdown.tsx";
/** Parley's wire rules outside the SDK: refusals, final closes, resume-none, last-message-only. */
export {
  closeNotice,
  isBillingRefusal,
  isStreamResumeNone,
  lastMessageOnly,
  messageText,
  type ParleyError,
  readParleyError,
} from "./protocol.ts";
/** A reply's reasoning, collapsible and apart from the answer. */
export { Reasoning } from "./reasoning.tsx";
/** Under a reply: stop/failure marks, cost/tokens/steps, billing notice, Copy and Regenerate. */
export { CopyButton, type ReplyEnd, ReplyFooter, StopNotice } from "./reply-footer.tsx";
/** Readers for what the agents write in reply metadata (defensive: it crosses the wire). */
export {
  type AssistantMeta,
  describeReason,
  type OnboardingMeta,
  previewStatus,
  type ReplyFinish,
  readAssistantMeta,
  readOnboardingMeta,
  type StopCode,
} from "./reply-meta.ts";
/** The model and assistant profile version a reply ran with (issue 29). */
export { type ReplyModelMeta, readReplyModel } from "./reply-model.tsx";
/** A reply's sources (issue 31): its citations, each opening the passage in a dialog. */
export {
  type CitationView,
  type OpenSource,
  ReplySources,
  readCitations,
  type SourcePassage,
} from "./reply-sources.tsx";
/** A message as a sentence (the API's messages end without a full stop). */
export { sentence } from "./sentence.ts";
/** The person's chats: New chat, search, rename in place, delete after the app's confirmation. */
export {
  type SessionLinkProps,
  SessionSidebar,
  type SessionSidebarProps,
  type SessionSummary,
} from "./session-sidebar.tsx";
/** An empty chat's suggested prompts (a profile's), the web app's and the embed's. */
export { SuggestedPrompts } from "./suggested-prompts.tsx";
/** Tool-call cards with their state, and the Approve / Deny card for a pending call. */
export {
  type AnyToolPart,
  ApprovalCard,
  readMemoryChange,
  ToolPartView,
  toolStateLabel,
} from "./tool-part.tsx";
/** The chat hook: useAgent + useAgentChat with tickets, refusals, closes and resume handled. */
export {
  type AgentKind,
  type ApprovalResponder,
  type ParleyChat,
  type ParleyChatState,
  type UseParleyChatOptions,
  useParleyChat,
} from "./use-parley-chat.ts";

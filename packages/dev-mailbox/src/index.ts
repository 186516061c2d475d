/**
 * @parley/dev-mailbox: the mail catcher `pnpm dev` and the workerd tests start. Parley's Worker
 * sends to it as it would to Cloudflare Email Service's `send_raw` API; people read the mail at
 * its pages, tests through its JSON API. `startDevMailbox` opens a socket; the rest is pure.
 */
export { escapeHtml, linkify, messageHtmlHeaders } from "./pages.ts";
export { type DevMailbox, type DevMailboxOptions, startDevMailbox } from "./server.ts";
export { linksIn, MAX_MESSAGES, MailStore, type StoredMessage } from "./store.ts";

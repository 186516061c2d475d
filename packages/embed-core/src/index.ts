/**
 * @parley/embed-core: what the embeddable assistant (the `<parley-assistant>` element and
 * `@parley/react`) knows of Parley, without any UI: the end-user token (both answers a host page
 * may give, refreshed ahead of expiry and once after a 401) and the typed end-user API calls,
 * whose failures are values (`Result`, `EmbedError`). No React and no runtime dependency, so both
 * embeds share it at no size cost.
 */
export type {
  ChatOpening,
  EndUserToolCall,
  LimitState,
  LimitStatus,
  Page,
  Session,
} from "@parley/shared";
export {
  type ConnectTicket,
  createEmbedClient,
  type EmbedClient,
  type EmbedClientOptions,
  type EmbedMe,
} from "./client.ts";
export {
  type EmbedError,
  EmbedFailure,
  type Result,
  readError,
  unwrap,
} from "./errors.ts";
export {
  createTokenManager,
  type EndUserRef,
  type GetToken,
  REFRESH_AT,
  type TokenAnswer,
  type TokenManager,
  type TokenManagerOptions,
  TokenSourceError,
  tokenUrlSource,
} from "./tokens.ts";

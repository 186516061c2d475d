/** Money display and input: one implementation, the chat package's (the chat shows costs too). */
export {
  type DollarsError,
  dollarsInput,
  formatMicros,
  MICROS_PER_DOLLAR,
  type ParsedDollars,
  parseDollars,
  parseDollarsToMicros,
} from "@parley/chat-ui/format";

import { ArrowUp, Square } from "lucide-react";
import {
  type KeyboardEvent,
  type MouseEvent,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
} from "react";
import { cn } from "./cn.ts";
import type { ReturnedDraft } from "./use-parley-chat.ts";

/** The agents' default `MAX_USER_MESSAGE_BYTES` (16 KiB). */
const DEFAULT_MAX_BYTES = 16 * 1024;
/** How long after a send a click on Stop is taken as the tail of that send. */
const STOP_GRACE_MS = 400;
const encoder = new TextEncoder();
const draftBytes = (text: string) => encoder.encode(text.trim()).byteLength;
const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * The message box: Enter sends, Shift+Enter breaks the line, Esc stops a reply on its way. It
 * grows with the draft up to a max height (then scrolls) and never shrinks below three lines, so
 * a phone keeps room to write. Closed, it is disabled and says why.
 *
 * While a reply streams each key and button does one thing: Stop and Esc stop it and nothing
 * else, Enter sends nothing (it says how to send); a draft typed meanwhile stays in the box.
 */
export function Composer({
  busy,
  onSend,
  onStop,
  closedReason = null,
  placeholder = "Write a message…",
  autoFocus = false,
  maxBytes = DEFAULT_MAX_BYTES,
  returned = null,
}: {
  busy: boolean;
  /** Called with the trimmed draft; the box then clears. */
  onSend: (text: string) => void;
  onStop: () => void;
  /** Why nothing can be sent (access lost, preview used up); null while the chat is open. */
  closedReason?: string | null;
  placeholder?: string;
  autoFocus?: boolean;
  /** The server's limit on one message, in UTF-8 bytes: a longer draft is refused here, in words. */
  maxBytes?: number;
  /**
   * A sent message the server refused (nothing of it was stored): its text comes back into the
   * box, unless the person has started another one meanwhile.
   */
  returned?: ReturnedDraft | null;
}) {
  const [draft, setDraft] = useState("");
  /** Enter was pressed on a draft while a reply streams: say why nothing was sent. */
  const [heldBack, setHeldBack] = useState(false);
  const sentAt = useRef(0);
  const box = useRef<HTMLTextAreaElement>(null);
  const reasonId = useId();
  const closed = closedReason !== null;

  // Height follows the content: reset to auto so it can shrink, then take the content's height;
  // the min/max classes clamp it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-measure whenever the draft changes
  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    element.style.height = "auto";
    element.style.height = `${element.scrollHeight}px`;
  }, [draft]);

  const returnedSeq = returned?.seq;
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per returned message (its seq)
  useEffect(() => {
    if (returnedSeq === undefined || !returned) return;
    setDraft((current) => (current.trim() === "" ? returned.text : current));
    box.current?.focus();
  }, [returnedSeq]);

  const bytes = draftBytes(draft);
  const tooLong = bytes > maxBytes;
  const canSend = !busy && !closed && draft.trim() !== "" && !tooLong;
  const send = () => {
    if (!canSend) return;
    sentAt.current = Date.now();
    onSend(draft.trim());
    setDraft("");
  };
  // Stop takes Send's place the moment a message goes: the second click of a double click (or a
  // quick second tap) must not stop the reply it just asked for.
  const stop = (event: MouseEvent<HTMLButtonElement>) => {
    // Stop is inside the form: the click's default action must never submit it. Stopping
    // re-renders Send in Stop's place before the browser runs that default action, and a button
    // that became `type="submit"` under the pointer would send the draft typed meanwhile (a new,
    // paid reply the person did not ask for). The buttons are also keyed apart, so they are never
    // one element.
    event.preventDefault();
    if (event.detail > 1 || Date.now() - sentAt.current < STOP_GRACE_MS) return;
    onStop();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // An IME composing a word uses Enter to confirm it, not to send.
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      if (busy && draft.trim() !== "") setHeldBack(true);
      send();
    } else if (event.key === "Escape" && busy) {
      event.preventDefault();
      onStop();
    }
  };
  // The hint is about the reply in flight: gone once it ends (the draft can be sent then).
  if (heldBack && !busy) setHeldBack(false);

  return (
    <form
      // In the transcript's column (centred, as wide as the messages), clear of a phone's home bar.
      className="border-border border-t px-3 pt-3 pb-[max(1rem,env(safe-area-inset-bottom))] *:mx-auto *:w-full *:max-w-3xl"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <div className="relative flex items-end gap-2 rounded-lg border border-input bg-card p-2 focus-within:ring-2 focus-within:ring-ring">
        <textarea
          ref={box}
          aria-label="Message"
          aria-describedby={closed || tooLong ? reasonId : undefined}
          aria-invalid={tooLong || undefined}
          value={draft}
          rows={3}
          disabled={closed}
          // biome-ignore lint/a11y/noAutofocus: the app opts in for a page whose point is the chat
          autoFocus={autoFocus}
          placeholder={closed ? "This chat is closed." : placeholder}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onKeyDown}
          className="max-h-60 min-h-[4.5rem] w-full flex-1 resize-none overflow-y-auto bg-transparent px-1 text-base text-foreground leading-6 outline-none placeholder:text-muted-foreground disabled:cursor-not-allowed sm:text-sm"
        />
        {busy ? (
          <button
            key="stop"
            type="button"
            aria-label="Stop"
            title="Stop (Esc)"
            onClick={stop}
            className="inline-flex size-9 shrink-0 items-center justify-center rounded-md bg-foreground text-background outline-none focus-visible:ring-2 focus-visible:ring-ring focus-visible:ring-offset-2"
          >
            <Square aria-hidden="true" className="size-4" />
          </button>
        ) : (
          <button
            key="send"
            type="submit"
            aria-label="Send"
            title="Send (Enter)"
            disabled={!canSend}
            className={cn(
              "inline-flex size-9 shrink-0 items-center justify-center rounded-md bg-primary text-primary-foreground outline-none focus-visible:ring-2 focus-visible:ring-ring focus-visible:ring-offset-2",
              "disabled:cursor-not-allowed disabled:opacity-50",
            )}
          >
            <ArrowUp aria-hidden="true" className="size-4" />
          </button>
        )}
      </div>
      {closed ? (
        <p id={reasonId} role="status" className="mt-2 text-muted-foreground text-sm">
          {closedReason}
        </p>
      ) : tooLong ? (
        <p id={reasonId} role="alert" className="mt-2 text-destructive text-sm">
          This message is too long to send: {kilobytes(bytes)} of at most {kilobytes(maxBytes)}.
          Shorten it or split it into several messages.
        </p>
      ) : heldBack ? (
        <p role="status" className="mt-2 text-muted-foreground text-sm">
          Your message is kept: send it when this reply ends, or stop the reply first (Esc).
        </p>
      ) : null}
    </form>
  );
}

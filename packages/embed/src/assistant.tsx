import type { EmbedClient, EmbedError, EmbedMe } from "@parley/embed-core";
import { MessageCircle, X } from "lucide-react";
import {
  Component,
  type KeyboardEvent,
  lazy,
  type ReactNode,
  Suspense,
  useEffect,
  useId,
  useRef,
  useState,
} from "react";
import { type ThemeChoice, useDark } from "./theme.ts";

export type AssistantMode = "launcher" | "inline";

export interface AssistantProps {
  client: EmbedClient;
  /** launcher: a floating button that opens a panel; inline: the chat fills its box. */
  mode: AssistantMode;
  theme: ThemeChoice;
  /** The project new chats go to (the app's first project when absent). */
  projectId?: string;
  /** The end user and the app are known: the assistant can be used. */
  onReady?: (me: EmbedMe) => void;
  /** Anything that failed, as data (also shown inside the assistant). */
  onError?: (error: EmbedError) => void;
}

/**
 * Everything past the frame (the chat package, the AI SDK, the socket) is one lazy chunk: a
 * launcher costs only this file's chunk until someone opens it. Asking for the chunk again is
 * free: the module system keeps it.
 */
const loadPanel = () => import("./panel.tsx");
const Panel = lazy(loadPanel);

/** The panel's chunk failed to load, or the panel threw: say so, offer a retry, tell the page. */
class PanelBoundary extends Component<
  { onError?: (error: EmbedError) => void; children: ReactNode },
  { failed: EmbedError | null }
> {
  override state: { failed: EmbedError | null } = { failed: null };

  static getDerivedStateFromError(error: unknown): { failed: EmbedError } {
    const embed = (error as { error?: EmbedError } | null)?.error;
    return {
      failed: embed ?? {
        code: "network",
        status: 0,
        message: "The assistant could not load. Check your connection and try again.",
      },
    };
  }

  override componentDidCatch(): void {
    if (this.state.failed) this.props.onError?.(this.state.failed);
  }

  override render() {
    const { failed } = this.state;
    if (!failed) return this.props.children;
    return (
      <div className="flex h-full flex-col items-center justify-center gap-3 p-6 text-center">
        <p role="alert" className="text-destructive text-sm">
          {failed.message}
        </p>
        <button
          type="button"
          onClick={() => this.setState({ failed: null })}
          className="rounded-md border border-border px-3 py-1.5 text-sm outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
        >
          Try again
        </button>
      </div>
    );
  }
}

function Status({ children, alert = false }: { children: ReactNode; alert?: boolean }) {
  return (
    <div className="flex h-full min-h-0 items-center justify-center p-6 text-center">
      <p
        role={alert ? "alert" : "status"}
        className={alert ? "text-destructive text-sm" : "text-muted-foreground text-sm"}
      >
        {children}
      </p>
    </div>
  );
}

/**
 * The embeddable assistant, for a shadow root (see mount.tsx): a launcher button with its panel,
 * or an inline box. It loads who the end user is first (`parley-ready`), then the panel's chunk
 * with the sessions and the chat. Launcher: the button has aria-expanded and aria-controls, the
 * panel is a labelled non-modal dialog, focus moves into it on open and back to the button on
 * close, and Esc closes it (unless Esc was taken, e.g. to stop a reply).
 */
export function Assistant({ client, mode, theme, projectId, onReady, onError }: AssistantProps) {
  const dark = useDark(theme);
  const [me, setMe] = useState<EmbedMe | null>(null);
  const [failure, setFailure] = useState<EmbedError | null>(null);
  const [open, setOpen] = useState(mode === "inline");
  // Once opened, the panel stays mounted while hidden: closing must not drop the chat's socket.
  const [opened, setOpened] = useState(mode === "inline");
  const launcher = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const panelId = useId();
  const titleId = useId();
  const callbacks = useRef({ onReady, onError });
  callbacks.current = { onReady, onError };

  useEffect(() => {
    let live = true;
    void client.me().then((result) => {
      if (!live) return;
      if (result.ok) {
        setMe(result.data);
        callbacks.current.onReady?.(result.data);
      } else {
        setFailure(result.error);
        callbacks.current.onError?.(result.error);
      }
    });
    if (mode === "inline") void loadPanel();
    return () => {
      live = false;
    };
  }, [client, mode]);

  const show = () => {
    setOpened(true);
    setOpen(true);
  };
  const hide = () => {
    setOpen(false);
    launcher.current?.focus();
  };

  // Into the panel when it opens: the message box, or the dialog until the box is there (the
  // panel's chunk may still be loading). `autoFocus` is not enough: Preact only sets the
  // attribute, which browsers ignore on elements inserted after the page loaded.
  useEffect(() => {
    const box = panel.current;
    if (mode !== "launcher" || !open || !box) return;
    const composer = () => box.querySelector<HTMLElement>("textarea:not([disabled])");
    const found = composer();
    (found ?? box).focus();
    if (found) return;
    const observer = new MutationObserver(() => {
      const target = composer();
      if (!target) return;
      observer.disconnect();
      // Only if the person has not gone somewhere else meanwhile.
      const active = (box.getRootNode() as ShadowRoot | Document).activeElement;
      if (active === box || active === null) target.focus();
    });
    observer.observe(box, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [open, mode]);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (mode === "launcher" && event.key === "Escape" && !event.defaultPrevented) {
      event.preventDefault();
      hide();
    }
  };

  const title = me?.app.name ?? "Assistant";
  const body = failure ? (
    <Status alert>{failure.message}</Status>
  ) : !me ? (
    <Status>Loading…</Status>
  ) : (
    <PanelBoundary onError={onError}>
      <Suspense fallback={<Status>Loading…</Status>}>
        <Panel
          client={client}
          me={me}
          projectId={projectId}
          autoFocus={mode === "launcher"}
          onError={onError}
        />
      </Suspense>
    </PanelBoundary>
  );

  const frame = (
    <>
      <header className="flex shrink-0 items-center gap-2 border-border border-b px-3 py-2">
        <h2 id={titleId} className="min-w-0 flex-1 truncate font-semibold text-sm">
          {title}
        </h2>
        {mode === "launcher" ? (
          <button
            type="button"
            aria-label="Close assistant"
            onClick={hide}
            className="inline-flex size-8 items-center justify-center rounded-md text-muted-foreground outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring"
          >
            <X aria-hidden="true" className="size-4" />
          </button>
        ) : null}
      </header>
      <div className="min-h-0 flex-1">{body}</div>
    </>
  );

  return (
    <div className={dark ? "parley-root dark" : "parley-root"} data-mode={mode}>
      {mode === "inline" ? (
        <section
          aria-labelledby={titleId}
          className="flex h-full min-h-96 flex-col overflow-hidden rounded-lg border border-border bg-background text-foreground"
        >
          {frame}
        </section>
      ) : (
        <>
          {opened ? (
            <div
              ref={panel}
              id={panelId}
              role="dialog"
              aria-modal="false"
              aria-labelledby={titleId}
              tabIndex={-1}
              hidden={!open}
              onKeyDown={onKeyDown}
              // A floating panel above the launcher; on a phone, a full-screen sheet (its header's
              // Close button in the launcher's place), as Intercom and Crisp do.
              className="fixed right-4 bottom-22 z-[var(--parley-z-index,2147483000)] flex h-[min(var(--parley-panel-height,40rem),calc(100dvh-7rem))] w-[min(var(--parley-panel-width,26rem),calc(100vw-2rem))] flex-col overflow-hidden rounded-xl border border-border bg-background text-foreground shadow-2xl outline-none max-sm:inset-0 max-sm:h-dvh max-sm:w-full max-sm:rounded-none max-sm:border-0 max-sm:pb-[env(safe-area-inset-bottom)]"
            >
              {frame}
            </div>
          ) : null}
          <button
            ref={launcher}
            type="button"
            aria-label={open ? "Close assistant" : "Open assistant"}
            aria-expanded={open}
            aria-controls={opened ? panelId : undefined}
            onClick={open ? hide : show}
            // Fetch the panel's chunk as soon as someone is about to open it.
            onPointerEnter={() => void loadPanel()}
            onFocus={() => void loadPanel()}
            className={`fixed right-4 bottom-4 z-[var(--parley-z-index,2147483000)] inline-flex size-14 items-center justify-center rounded-full bg-primary text-primary-foreground shadow-lg outline-none hover:opacity-90 focus-visible:ring-2 focus-visible:ring-ring focus-visible:ring-offset-2 ${open ? "max-sm:hidden" : ""}`}
          >
            {open ? (
              <X aria-hidden="true" className="size-6" />
            ) : (
              <MessageCircle aria-hidden="true" className="size-6" />
            )}
          </button>
        </>
      )}
    </div>
  );
}

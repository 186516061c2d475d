import { FileText, X } from "lucide-react";
import { useEffect, useId, useRef, useState } from "react";
import { findQuote, passageText } from "./passage-text.ts";
import { sentence } from "./sentence.ts";

/**
 * A reply's sources (issue 31): the passages of the project's documents it was given, as the
 * agent writes them in its metadata (`citations`: document, version, heading, quoted passage),
 * listed under the reply; each opens the passage in a dialog. The app says how a passage is read
 * (`openSource`: a member's content route, an end user's passage route); without one, or when
 * that fails, the dialog shows the quote the reply kept.
 */

/** One citation, as read from a reply's metadata. */
export interface CitationView {
  documentId: string;
  documentName: string;
  version: number;
  heading: string;
  quote: string;
  chunkId: string;
}

/** A cited passage as the app reads it: the document's name, version, heading and the text. */
export interface SourcePassage {
  documentName: string;
  version: number;
  heading: string;
  text: string;
}

/** Reads a cited passage (rejects with an error whose `message` may be shown). */
export type OpenSource = (citation: CitationView) => Promise<SourcePassage>;

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

const str = (value: unknown, max: number): string | undefined =>
  typeof value === "string" && value.length <= max ? value : undefined;

/** The citations of a reply's metadata; malformed entries are dropped (it crosses the wire). */
export function readCitations(metadata: unknown): CitationView[] {
  const citations = record(metadata)?.citations;
  if (!Array.isArray(citations)) return [];
  return citations.flatMap((entry): CitationView[] => {
    const c = record(entry);
    if (!c) return [];
    const documentId = str(c.documentId, 100);
    const chunkId = str(c.chunkId, 40);
    const documentName = str(c.documentName, 300);
    const heading = str(c.heading, 2000) ?? "";
    const quote = str(c.quote, 2000) ?? "";
    const version = c.version;
    if (
      !documentId ||
      !chunkId ||
      documentName === undefined ||
      typeof version !== "number" ||
      !Number.isSafeInteger(version) ||
      version < 1
    ) {
      return [];
    }
    return [{ documentId, documentName, version, heading, quote, chunkId }];
  });
}

const sourceButton =
  "inline-flex max-w-full items-center gap-1 rounded-md border border-border px-2 py-1 text-left text-xs outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring";

/** Where a passage sits: "Policies › Returns", or the document's name before its first heading. */
const placeOf = (c: { documentName: string; heading: string }) =>
  c.heading === "" ? c.documentName : `${c.documentName} › ${c.heading}`;

/** The list of a reply's sources, each a button that opens its passage. */
export function ReplySources({
  citations,
  openSource,
}: {
  citations: readonly CitationView[];
  openSource?: OpenSource | undefined;
}) {
  const labelId = useId();
  const [open, setOpen] = useState<number | null>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  if (citations.length === 0) return null;
  const shown = open === null ? undefined : citations[open];
  return (
    <div className="border-border border-t pt-2">
      <p id={labelId} className="mb-1.5 font-medium text-muted-foreground text-xs">
        Sources
      </p>
      <ol aria-labelledby={labelId} className="flex flex-wrap gap-1.5">
        {citations.map((citation, index) => (
          <li key={`${citation.documentId}:${citation.chunkId}`} className="min-w-0 max-w-full">
            <button
              type="button"
              aria-haspopup="dialog"
              className={sourceButton}
              onClick={(event) => {
                opener.current = event.currentTarget;
                setOpen(index);
              }}
            >
              <span className="text-muted-foreground tabular-nums">{index + 1}</span>
              <FileText aria-hidden="true" className="size-3.5 shrink-0" />
              <span className="truncate">{placeOf(citation)}</span>
            </button>
          </li>
        ))}
      </ol>
      {shown ? (
        <SourceDialog
          citation={shown}
          openSource={openSource}
          onClose={() => {
            setOpen(null);
            // Back to the source that opened it (a dialog closed by Esc would leave focus nowhere).
            opener.current?.focus();
          }}
        />
      ) : null}
    </div>
  );
}

type Loaded =
  | { kind: "loading" }
  | { kind: "ready"; passage: SourcePassage }
  | { kind: "failed"; message: string };

/**
 * The passage in a modal `<dialog>` (the platform's: focus kept inside, Esc closes, the rest of
 * the page inert), in the light DOM or the embed's shadow root alike. The quote the reply used is
 * marked inside the passage.
 */
function SourceDialog({
  citation,
  openSource,
  onClose,
}: {
  citation: CitationView;
  openSource?: OpenSource | undefined;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [loaded, setLoaded] = useState<Loaded>(() =>
    openSource ? { kind: "loading" } : { kind: "ready", passage: fromQuote(citation) },
  );
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) {
      if (typeof element.showModal === "function") element.showModal();
      else element.setAttribute("open", "");
    }
  }, []);
  useEffect(() => {
    if (!openSource) return;
    let live = true;
    openSource(citation).then(
      (passage) => {
        if (live) setLoaded({ kind: "ready", passage });
      },
      (error: unknown) => {
        if (!live) return;
        const message =
          error instanceof Error && error.message !== ""
            ? error.message
            : "The passage could not be opened.";
        setLoaded({ kind: "failed", message });
      },
    );
    return () => {
      live = false;
    };
  }, [citation, openSource]);
  const passage = loaded.kind === "ready" ? loaded.passage : fromQuote(citation);
  return (
    <dialog
      ref={dialog}
      aria-labelledby={titleId}
      onClose={onClose}
      className="m-auto max-h-[85dvh] w-[min(40rem,calc(100vw-2rem))] overflow-hidden rounded-lg border border-border bg-card p-0 text-card-foreground shadow-lg backdrop:bg-black/50"
    >
      <div className="flex max-h-[85dvh] flex-col">
        <div className="flex items-start gap-3 border-border border-b px-4 py-3">
          <div className="min-w-0 flex-1">
            <h2 id={titleId} className="break-words font-semibold text-base">
              {passage.documentName}
            </h2>
            <p className="break-words text-muted-foreground text-sm">
              Version {passage.version}
              {passage.heading === "" ? null : ` · ${passage.heading}`}
            </p>
          </div>
          <button
            type="button"
            aria-label="Close"
            onClick={() => dialog.current?.close()}
            className="rounded-md p-1 text-muted-foreground outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring"
          >
            <X aria-hidden="true" className="size-4" />
          </button>
        </div>
        <div className="min-h-0 overflow-y-auto px-4 py-3 text-sm">
          {loaded.kind === "loading" ? (
            <p role="status" className="mb-2 text-muted-foreground text-xs">
              Opening the passage…
            </p>
          ) : null}
          {loaded.kind === "failed" ? (
            <p role="alert" className="mb-2 text-destructive text-xs">
              {sentence(loaded.message)} The quote this reply used:
            </p>
          ) : null}
          <blockquote
            data-testid="source-passage"
            className="whitespace-pre-wrap break-words border-border border-l-2 pl-3"
          >
            <Marked text={passage.text} quote={citation.quote} />
          </blockquote>
        </div>
      </div>
    </dialog>
  );
}

/** The passage as far as the citation itself knows it (its quote), before or without a read. */
const fromQuote = (citation: CitationView): SourcePassage => ({
  documentName: citation.documentName,
  version: citation.version,
  heading: citation.heading,
  text: citation.quote,
});

/**
 * The passage as reading text (passage-text.ts: no raw Markdown marks, no HTML, code as written),
 * with the reply's quote marked where it appears (a cut quote ends in "…").
 */
function Marked({ text, quote }: { text: string; quote: string }) {
  const readable = passageText(text);
  const at = findQuote(readable, quote);
  if (!at) return <>{readable}</>;
  return (
    <>
      {readable.slice(0, at.start)}
      <mark className="rounded-sm bg-warning/25 text-inherit">
        {readable.slice(at.start, at.end)}
      </mark>
      {readable.slice(at.end)}
    </>
  );
}

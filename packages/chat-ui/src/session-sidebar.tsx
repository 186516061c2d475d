import { Pencil, Plus, Search, Trash2 } from "lucide-react";
import { type ReactNode, useMemo, useRef, useState } from "react";
import { cn } from "./cn.ts";
import { formatMicros } from "./format.ts";

/** A chat session as the sidebar lists it. */
export interface SessionSummary {
  id: string;
  title: string;
  /** ISO date string, epoch milliseconds or Date. */
  updatedAt?: string | number | Date;
  spendMicros?: number;
}

/** Props the sidebar asks the app's link to carry (spread them on the router's Link). */
export interface SessionLinkProps {
  "aria-current": "page" | undefined;
  className: string;
}

export interface SessionSidebarProps {
  sessions: readonly SessionSummary[];
  currentId?: string | null;
  /** The app's link to a session (its router's Link), given the props to spread on it. */
  renderLink: (session: SessionSummary, children: ReactNode, props: SessionLinkProps) => ReactNode;
  onNew: () => void;
  onRename: (id: string, title: string) => void;
  /** Without it the list offers no Delete (the embed's end users cannot delete their chats). */
  onDelete?: (id: string) => void;
  /** The app's confirmation dialog; without it a delete happens on the first click. */
  confirmDelete?: (session: SessionSummary) => Promise<boolean>;
  label?: string;
  className?: string;
}

const dateFormat = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric" });
const iconButton =
  "inline-flex size-7 items-center justify-center rounded-md text-muted-foreground outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring";

function RenameInput({
  session,
  onDone,
}: {
  session: SessionSummary;
  onDone: (title: string | null) => void;
}) {
  const [value, setValue] = useState(session.title);
  // Esc and Enter end the edit before the input's blur does: the blur must not decide again.
  const settled = useRef(false);
  const finish = (title: string | null) => {
    if (settled.current) return;
    settled.current = true;
    const trimmed = title?.trim() ?? "";
    onDone(trimmed === "" || trimmed === session.title ? null : trimmed);
  };
  return (
    <input
      aria-label={`Rename ${session.title}`}
      value={value}
      // The API's limit for a title: longer text cannot be typed, rather than refused after Enter.
      maxLength={200}
      // biome-ignore lint/a11y/noAutofocus: the person just asked to rename this row
      autoFocus
      onChange={(event) => setValue(event.target.value)}
      onKeyDown={(event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          finish(value);
        } else if (event.key === "Escape") {
          event.preventDefault();
          finish(null);
        }
      }}
      onBlur={() => finish(value)}
      className="w-full min-w-0 rounded-md border border-input bg-background px-2 py-1 text-sm outline-none focus-visible:ring-2 focus-visible:ring-ring"
    />
  );
}

/**
 * The list of a person's chats: New chat, a local search by title, and per session a link (the
 * app's router), rename in place (Enter saves, Esc cancels) and delete (after the app's own
 * confirmation). Presentational: the app owns the data and the requests.
 */
export function SessionSidebar({
  sessions,
  currentId = null,
  renderLink,
  onNew,
  onRename,
  onDelete,
  confirmDelete,
  label = "Chats",
  className,
}: SessionSidebarProps) {
  const [query, setQuery] = useState("");
  const [editing, setEditing] = useState<string | null>(null);
  const shown = useMemo(() => {
    const needle = query.trim().toLocaleLowerCase();
    return needle === ""
      ? sessions
      : sessions.filter((session) => session.title.toLocaleLowerCase().includes(needle));
  }, [sessions, query]);

  const remove = async (session: SessionSummary) => {
    if (confirmDelete && !(await confirmDelete(session))) return;
    onDelete?.(session.id);
  };

  return (
    <nav
      aria-label={label}
      className={cn(
        "flex h-full min-h-0 flex-col gap-2 bg-background p-2 text-foreground",
        className,
      )}
    >
      <button
        type="button"
        onClick={onNew}
        className="inline-flex items-center justify-center gap-1.5 rounded-lg bg-primary px-3 py-2 font-medium text-primary-foreground text-sm outline-none hover:opacity-90 focus-visible:ring-2 focus-visible:ring-ring focus-visible:ring-offset-2"
      >
        <Plus aria-hidden="true" className="size-4" />
        New chat
      </button>
      <div className="relative">
        <Search
          aria-hidden="true"
          className="-translate-y-1/2 pointer-events-none absolute top-1/2 left-2 size-4 text-muted-foreground"
        />
        <input
          type="search"
          aria-label="Search chats"
          placeholder="Search chats"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          className="w-full rounded-md border border-input bg-background py-1.5 pr-2 pl-8 text-sm outline-none placeholder:text-muted-foreground focus-visible:ring-2 focus-visible:ring-ring"
        />
      </div>
      <ul className="min-h-0 flex-1 space-y-0.5 overflow-y-auto">
        {shown.length === 0 ? (
          <li className="px-2 py-4 text-center text-muted-foreground text-sm">
            {sessions.length === 0 ? "No chats yet." : "No chat matches."}
          </li>
        ) : null}
        {shown.map((session) => {
          const current = session.id === currentId;
          const details = [
            session.updatedAt === undefined ? null : dateFormat.format(new Date(session.updatedAt)),
            session.spendMicros === undefined ? null : formatMicros(session.spendMicros),
          ].filter((part): part is string => part !== null);
          return (
            <li
              key={session.id}
              data-current={current || undefined}
              className={cn(
                "group flex items-center gap-1 rounded-md px-1",
                current ? "bg-accent text-accent-foreground" : "hover:bg-muted",
              )}
            >
              {editing === session.id ? (
                <RenameInput
                  session={session}
                  onDone={(title) => {
                    setEditing(null);
                    if (title !== null) onRename(session.id, title);
                  }}
                />
              ) : (
                <>
                  {renderLink(
                    session,
                    <>
                      <span className="block truncate">{session.title}</span>
                      {details.length > 0 ? (
                        <span className="block text-muted-foreground text-xs">
                          {details.join(" · ")}
                        </span>
                      ) : null}
                    </>,
                    {
                      "aria-current": current ? "page" : undefined,
                      className:
                        "min-w-0 flex-1 rounded-md px-1 py-1.5 text-sm outline-none focus-visible:ring-2 focus-visible:ring-ring",
                    },
                  )}
                  <button
                    type="button"
                    aria-label={`Rename ${session.title}`}
                    onClick={() => setEditing(session.id)}
                    className={iconButton}
                  >
                    <Pencil aria-hidden="true" className="size-3.5" />
                  </button>
                  {onDelete ? (
                    <button
                      type="button"
                      aria-label={`Delete ${session.title}`}
                      onClick={() => void remove(session)}
                      className={cn(iconButton, "hover:text-destructive")}
                    >
                      <Trash2 aria-hidden="true" className="size-3.5" />
                    </button>
                  ) : null}
                </>
              )}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

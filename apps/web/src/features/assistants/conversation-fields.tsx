import { BUILT_IN_TOOLS, parseSourceToolRef } from "@parley/shared";
import { Plus, X } from "lucide-react";
import { useId, useRef } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Input, Textarea } from "../../components/ui/input.tsx";
import { cn } from "../../lib/cn.ts";
import { MAX_SUGGESTIONS } from "./profile-draft.ts";

const WELCOME_MAX = 1000;
const SUGGESTION_MAX = 200;

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} role="alert" className="text-destructive text-sm">
      {message}
    </p>
  );
}

/**
 * How a chat opens: the welcome message and up to six suggested prompts a person can start from.
 * Empty suggestion boxes are not saved.
 */
export function ConversationFields({
  welcome,
  suggestions,
  onWelcome,
  onSuggestions,
  errors,
  readOnly,
}: {
  welcome: string;
  suggestions: string[];
  onWelcome: (value: string) => void;
  onSuggestions: (value: string[]) => void;
  errors: Record<string, string | undefined>;
  readOnly?: boolean;
}) {
  const id = useId();
  const list = useRef<HTMLOListElement>(null);
  const focusBox = (index: number) =>
    requestAnimationFrame(() =>
      list.current?.querySelectorAll<HTMLInputElement>("input")[index]?.focus(),
    );
  return (
    <div className="grid gap-5">
      <div className="grid gap-1.5">
        <div className="flex items-baseline justify-between gap-2">
          <label htmlFor={`${id}-welcome`} className="font-medium text-sm">
            Welcome message
          </label>
          <span className="text-muted-foreground text-xs tabular-nums">
            {welcome.length} / {WELCOME_MAX}
          </span>
        </div>
        <Textarea
          id={`${id}-welcome`}
          rows={3}
          maxLength={WELCOME_MAX}
          readOnly={readOnly}
          placeholder="Hi! I can help with your notes, your plan and your account."
          value={welcome}
          aria-invalid={errors.welcome !== undefined}
          aria-describedby={`${id}-welcome-hint${errors.welcome ? ` ${id}-welcome-error` : ""}`}
          onChange={(event) => onWelcome(event.target.value)}
        />
        <p id={`${id}-welcome-hint`} className="text-muted-foreground text-xs">
          Shown before the first message. Leave it empty for none.
        </p>
        <FieldError id={`${id}-welcome-error`} message={errors.welcome} />
      </div>

      <fieldset className="grid gap-2" aria-describedby={`${id}-suggestions-hint`}>
        <legend className="flex w-full items-baseline justify-between gap-2 font-medium text-sm">
          <span>Suggested prompts</span>
          <span className="font-normal text-muted-foreground text-xs tabular-nums">
            {suggestions.length} of {MAX_SUGGESTIONS}
          </span>
        </legend>
        <p id={`${id}-suggestions-hint`} className="text-muted-foreground text-xs">
          One click starts a chat with one of them.
        </p>
        {suggestions.length > 0 ? (
          <ol ref={list} className="grid gap-2">
            {suggestions.map((text, index) => {
              const error = errors[`suggestions.${index}`];
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: boxes are positions; removing one moves focus explicitly.
                <li key={index} className="grid gap-1">
                  <div className="flex items-center gap-2">
                    <Input
                      aria-label={`Suggested prompt ${index + 1}`}
                      maxLength={SUGGESTION_MAX}
                      readOnly={readOnly}
                      value={text}
                      aria-invalid={error !== undefined}
                      placeholder={index === 0 ? "What can you help me with?" : undefined}
                      onChange={(event) =>
                        onSuggestions(
                          suggestions.map((item, at) => (at === index ? event.target.value : item)),
                        )
                      }
                    />
                    {readOnly ? null : (
                      <Button
                        variant="ghost"
                        size="icon"
                        aria-label={`Remove suggested prompt ${index + 1}`}
                        onClick={() => {
                          onSuggestions(suggestions.filter((_, at) => at !== index));
                          focusBox(Math.max(0, index - 1));
                        }}
                      >
                        <X aria-hidden="true" />
                      </Button>
                    )}
                  </div>
                  {error ? <p className="text-destructive text-sm">{error}</p> : null}
                </li>
              );
            })}
          </ol>
        ) : null}
        {readOnly ? null : (
          <div>
            <Button
              size="sm"
              disabled={suggestions.length >= MAX_SUGGESTIONS}
              onClick={() => {
                onSuggestions([...suggestions, ""]);
                focusBox(suggestions.length);
              }}
            >
              <Plus aria-hidden="true" />
              Add a suggested prompt
            </Button>
          </div>
        )}
        <FieldError id={`${id}-suggestions-error`} message={errors.suggestions} />
      </fieldset>
    </div>
  );
}

const isSourceTool = (name: string) => parseSourceToolRef(name) !== null;

/** "read_project_memory" as a person reads it: "Read project memory". */
const toolTitle = (name: string) => {
  const words = name.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * Which built-in tools the assistant may use (the registry: `BUILT_IN_TOOLS`, and knowledge's
 * `search_knowledge`). A name the profile
 * holds that this app does not know is listed too, so saving never drops it unseen. End users
 * and models without tool calls get none, whatever is switched on.
 */
export function ToolsField({
  tools,
  onChange,
  modelHasTools,
  error,
  readOnly,
}: {
  tools: string[];
  onChange: (tools: string[]) => void;
  modelHasTools: boolean;
  error?: string;
  readOnly?: boolean;
}) {
  const id = useId();
  // A tool source's tools (`source:<id>:<tool>`) have their own switches (SourceToolsField).
  const known = [
    ...BUILT_IN_TOOLS.map((tool) => ({ name: tool.name, description: tool.description })),
    // Knowledge (issue 31): the project's documents, for end users too.
    {
      name: "search_knowledge",
      description:
        "Search the project's documents and cite them; end users of the org's apps get it too",
    },
  ];
  const other = tools
    .filter((name) => !known.some((tool) => tool.name === name) && !isSourceTool(name))
    .map((name) => ({ name, description: "A tool this app does not describe yet" }));
  const order = [...known, ...other].map((tool) => tool.name);
  return (
    <fieldset className="grid gap-3" aria-describedby={`${id}-hint`}>
      <legend className="sr-only">Built-in tools</legend>
      <p id={`${id}-hint`} className="text-muted-foreground text-sm">
        Built-in tools run in members' chats only; an app's end users get none of them but
        knowledge.
        {modelHasTools ? null : (
          <strong className="font-medium text-warning">
            {" "}
            The chosen model does not call tools, so none will run with it.
          </strong>
        )}
      </p>
      <ul className="grid gap-2 sm:grid-cols-2">
        {[...known, ...other].map((tool) => {
          const on = tools.includes(tool.name);
          return (
            <li key={tool.name}>
              <label
                className={cn(
                  "flex h-full items-start gap-3 rounded-md border p-3 text-sm",
                  on ? "border-primary/50 bg-accent/40" : "border-border",
                  readOnly ? "" : "cursor-pointer hover:bg-accent/60",
                )}
              >
                <input
                  type="checkbox"
                  className="mt-0.5 size-4 shrink-0 accent-primary"
                  checked={on}
                  disabled={readOnly}
                  onChange={(event) => {
                    const next = event.target.checked
                      ? [...tools, tool.name]
                      : tools.filter((name) => name !== tool.name);
                    // In the registry's order: switching one off and on again is no change. The
                    // source tools switched on stay, after them.
                    onChange([
                      ...order.filter((name) => next.includes(name)),
                      ...tools.filter(isSourceTool),
                    ]);
                  }}
                />
                <span className="grid gap-0.5">
                  <span className="font-medium">{toolTitle(tool.name)}</span>
                  <span className="text-muted-foreground text-xs">{tool.description}</span>
                </span>
              </label>
            </li>
          );
        })}
      </ul>
      {error ? (
        <p role="alert" className="text-destructive text-sm">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

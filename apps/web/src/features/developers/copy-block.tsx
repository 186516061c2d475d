import { Check, Copy } from "lucide-react";
import { useId, useState } from "react";
import { Button } from "../../components/ui/button.tsx";
import { cn } from "../../lib/cn.ts";

/** Copies `text`; says so for a moment (and to screen readers). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      size="sm"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
          window.setTimeout(() => setCopied(false), 2000);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? <Check aria-hidden="true" /> : <Copy aria-hidden="true" />}
      <span aria-live="polite">{copied ? "Copied" : label}</span>
    </Button>
  );
}

/**
 * A block of code or a secret with a copy button: it wraps rather than scrolling the page
 * sideways on a phone, and its box takes focus so a keyboard can scroll a long one.
 */
export function CopyBlock({
  title,
  text,
  copyLabel = "Copy",
  className,
}: {
  title: string;
  text: string;
  copyLabel?: string;
  className?: string;
}) {
  const id = useId();
  return (
    <figure className={cn("grid min-w-0 gap-1.5", className)} aria-labelledby={id}>
      <figcaption className="flex items-center justify-between gap-2">
        <span id={id} className="font-medium text-sm">
          {title}
        </span>
        <CopyButton text={text} label={copyLabel} />
      </figcaption>
      <pre
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be keyboard-reachable.
        tabIndex={0}
        className="max-h-72 overflow-auto whitespace-pre-wrap break-all rounded-md border border-border bg-muted px-3 py-2 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
      >
        <code>{text}</code>
      </pre>
    </figure>
  );
}

/** A secret shown this once: copy it now, it is never shown again. */
export function SecretOnce({
  title,
  secret,
  note,
}: {
  title: string;
  secret: string;
  note: string;
}) {
  return (
    <div className="grid gap-2 rounded-md border border-warning/40 bg-warning/10 p-3">
      <CopyBlock title={title} text={secret} copyLabel="Copy secret" />
      <p className="text-sm">{note}</p>
    </div>
  );
}

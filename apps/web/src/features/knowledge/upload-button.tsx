import { Upload } from "lucide-react";
import { type ReactNode, useId, useRef } from "react";
import { Button } from "../../components/ui/button.tsx";
import { DOCUMENT_ACCEPT } from "../../lib/knowledge-api.ts";

/**
 * A button that picks one file (text, Markdown, HTML or PDF) and hands it over. The file input
 * itself is hidden from sight and from the tab order: the button is what people and screen
 * readers use.
 */
export function UploadButton({
  children,
  onFile,
  busy = false,
  size = "md",
  variant = "primary",
  label,
}: {
  children: ReactNode;
  onFile: (file: File) => void;
  busy?: boolean;
  size?: "sm" | "md";
  variant?: "primary" | "secondary";
  /** An accessible name when the visible text is not enough ("New version of faq.md"). */
  label?: string;
}) {
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  return (
    <>
      <Button
        size={size}
        variant={variant}
        disabled={busy}
        aria-label={label}
        onClick={() => input.current?.click()}
      >
        <Upload aria-hidden="true" />
        {busy ? "Uploading…" : children}
      </Button>
      <input
        ref={input}
        id={id}
        type="file"
        accept={DOCUMENT_ACCEPT}
        className="sr-only"
        tabIndex={-1}
        aria-hidden="true"
        data-testid={label ? `upload-${label}` : "upload-document"}
        onChange={(event) => {
          const file = event.currentTarget.files?.[0];
          // Cleared, so the same file picked again is a change too.
          event.currentTarget.value = "";
          if (file) onFile(file);
        }}
      />
    </>
  );
}

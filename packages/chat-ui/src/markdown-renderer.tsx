/**
 * The markdown renderer itself, in its own chunk: streamdown with its parsers weighs about 168 KB
 * gzip, far over the chat's 60 KB initial budget, so `markdown.tsx` loads this module lazily. The
 * code highlighter (Shiki, heavier still) is a second step, fetched only once a reply has a fence.
 */
import { useEffect, useState } from "react";
import { type PluginConfig, Streamdown } from "streamdown";
import { cn } from "./cn.ts";

type CodePlugin = NonNullable<PluginConfig["code"]>;

let codePlugin: CodePlugin | null = null;
let codePluginLoad: Promise<CodePlugin> | null = null;

function loadCodePlugin(): Promise<CodePlugin> {
  codePluginLoad ??= import("@streamdown/code").then(({ code }) => {
    codePlugin = code;
    return code;
  });
  return codePluginLoad;
}

const FENCE = /^ {0,3}(```|~~~)/m;

const TRANSLATIONS = { copyCode: "Copy code", copied: "Copied" };
const CONTROLS = { code: { copy: true, download: false }, table: true, mermaid: false } as const;

/** Streamed markdown; see `Markdown` for the contract. */
export function MarkdownRenderer({
  text,
  streaming,
  className,
}: {
  text: string;
  streaming: boolean;
  className?: string;
}) {
  const [code, setCode] = useState<CodePlugin | null>(codePlugin);
  const fenced = FENCE.test(text);
  useEffect(() => {
    if (!fenced || code) return;
    let live = true;
    loadCodePlugin().then(
      (plugin) => {
        if (live) setCode(plugin);
      },
      // Without the highlighter code still renders, plain, with its copy button.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [fenced, code]);

  return (
    <Streamdown
      mode={streaming ? "streaming" : "static"}
      isAnimating={streaming}
      plugins={code ? { code } : {}}
      controls={CONTROLS}
      translations={TRANSLATIONS}
      lineNumbers={false}
      className={cn(
        "min-w-0 break-words text-sm leading-relaxed [&>*:first-child]:mt-0 [&>*:last-child]:mb-0",
        "[&_a]:text-primary [&_a]:underline [&_a]:underline-offset-2",
        className,
      )}
    >
      {text}
    </Streamdown>
  );
}

/**
 * Free text other people typed that names an erased person (their email in a project's memory or a
 * request's reason, their id pasted into a note): each identifier is replaced, in any letter case,
 * so the verification scan (which also ignores case) finds nothing. A name, or an address spelled
 * out ("ada at example dot com"), cannot be told from other text and is not touched
 * (docs/2026-12-01-data-retention.md).
 */
export interface Replacement {
  find: string;
  replace: string;
}

const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * `text` with every needle replaced, in any case. Safe inside JSON: ids and emails hold no quote,
 * backslash or control character, and neither do the replacements.
 */
export function scrubText(text: string, replacements: readonly Replacement[]): string {
  let out = text;
  for (const { find, replace } of replacements) {
    if (find === "") continue;
    out = out.replace(new RegExp(literally(find), "gi"), replace);
  }
  return out;
}

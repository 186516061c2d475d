/**
 * A message as a sentence, ending in its own punctuation or a full stop. The API's messages are
 * clauses without a final full stop ("Version 1 was replaced: the document is at version 2"), so
 * a screen that sets text after one ("… The quote this reply used:") must end it first; a message
 * that already ends in `.`, `!`, `?` or `…` is kept as it is (no "..").
 */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "" || /[.!?…]["'”’)]?$/u.test(trimmed)) return trimmed;
  return `${trimmed}.`;
}

/**
 * The embed's stand-in for tailwind-merge in chat-ui's `cn` (clsx only, as the web app's `cn`):
 * the embed passes no class that conflicts with one a chat component sets, and the real library
 * is 8 KB gzip of the first open.
 */
export function twMerge(...classes: (string | undefined | null | false)[]): string {
  return classes.filter(Boolean).join(" ");
}

/**
 * A one-time notice carried to the next screen through sessionStorage ("flash" messages): it
 * survives the redirects a sign-out sets off (the shell sends a signed-out visitor to sign-in on
 * its own), which a search parameter would not. Read once, then gone, so a reload does not show
 * it again.
 */
export type Flash = "account-deleted" | "password-reset";

const KEY = "parley.flash";

export function setFlash(flash: Flash): void {
  sessionStorage.setItem(KEY, flash);
}

export function peekFlash(): Flash | null {
  const value = sessionStorage.getItem(KEY);
  return value === "account-deleted" || value === "password-reset" ? value : null;
}

export function clearFlash(): void {
  sessionStorage.removeItem(KEY);
}

import { useCallback, useEffect, useSyncExternalStore } from "react";

export type ThemeChoice = "light" | "dark" | "system";
const KEY = "parley.theme";
const listeners = new Set<() => void>();

const read = (): ThemeChoice => {
  const value = localStorage.getItem(KEY);
  return value === "light" || value === "dark" ? value : "system";
};

const media = () => window.matchMedia("(prefers-color-scheme: dark)");

/** Puts the `dark` class on `<html>` for the choice (public/boot.js does the same before paint). */
export function applyTheme(choice: ThemeChoice = read()): void {
  const dark = choice === "dark" || (choice === "system" && media().matches);
  document.documentElement.classList.toggle("dark", dark);
}

/** The person's theme (light, dark or the system's), kept in this browser. */
export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const choice = useSyncExternalStore(
    (callback) => {
      listeners.add(callback);
      return () => listeners.delete(callback);
    },
    read,
    () => "system" as const,
  );
  useEffect(() => {
    if (choice !== "system") return;
    const query = media();
    const onChange = () => applyTheme("system");
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, [choice]);
  const set = useCallback((next: ThemeChoice) => {
    if (next === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, next);
    applyTheme(next);
    for (const listener of listeners) listener();
  }, []);
  return [choice, set];
}

import { useEffect, useState } from "react";

export type ThemeChoice = "light" | "dark" | "auto";

/** An attribute's value as a theme: anything but "light" or "dark" follows the system. */
export const readTheme = (value: string | null | undefined): ThemeChoice =>
  value === "light" || value === "dark" ? value : "auto";

const query = "(prefers-color-scheme: dark)";

/** Whether the assistant is dark now: the choice, or the system's while the choice is "auto". */
export function useDark(theme: ThemeChoice): boolean {
  const media = () => (typeof matchMedia === "function" ? matchMedia(query).matches : false);
  const [systemDark, setSystemDark] = useState(media);
  useEffect(() => {
    if (theme !== "auto" || typeof matchMedia !== "function") return;
    const list = matchMedia(query);
    const onChange = () => setSystemDark(list.matches);
    onChange();
    list.addEventListener("change", onChange);
    return () => list.removeEventListener("change", onChange);
  }, [theme]);
  return theme === "dark" || (theme === "auto" && systemDark);
}

import { type ClassValue, clsx } from "clsx";

/**
 * Joins class names. Deliberately not tailwind-merge (9 KB gzip in the shell's budget of 120): a
 * component's `className` adds utilities, it never overrides one the component sets; an
 * alternative look is a variant of the component (`size`, `variant`), not a clashing class.
 */
export const cn = (...inputs: ClassValue[]): string => clsx(inputs);

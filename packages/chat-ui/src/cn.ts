import { type ClassValue, clsx } from "clsx";
import { twMerge } from "tailwind-merge";

/** Joins class names and lets a later Tailwind utility override an earlier one (`className` props). */
export const cn = (...values: ClassValue[]): string => twMerge(clsx(values));

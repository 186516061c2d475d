import { type ApiError, isApiError } from "../lib/api.ts";

/** The server's error if it names this field (`aria-invalid` on that field). */
export const fieldError = (error: unknown, field: string): ApiError | null =>
  isApiError(error) && error.field === field ? error : null;

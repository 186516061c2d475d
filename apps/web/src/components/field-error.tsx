import { type ApiError, errorMessage, isApiError } from "../lib/api.ts";

/** The error of a form, announced to screen readers; nothing when there is none. */
export function FormError({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" className="error">
      {errorMessage(error)}
    </p>
  );
}

/** The server's error if it names this field. */
export const fieldError = (error: unknown, field: string): ApiError | null =>
  isApiError(error) && error.field === field ? error : null;

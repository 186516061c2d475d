import { AppError, jsonValueProblem } from "@parley/shared";
import { createMiddleware } from "hono/factory";
import { validator } from "hono/validator";
import { resolver, uniqueSymbol } from "hono-openapi";
import type { z } from "zod";
import { invalidRequest } from "./errors.ts";

const jsonMediaType = /^application\/([\w.-]+\+)?json$/i;

/**
 * Validates a JSON body against a strict zod schema. A non-JSON content type, malformed JSON (Hono
 * throws, `errorResponse` maps it), wrong types, missing and unknown fields are all
 * `invalid_request` naming the field; nothing is written because the handler never runs. Before
 * any schema sees the body it is walked without recursion: nesting deeper than `MAX_JSON_DEPTH`
 * (which overflowed zod's recursive `z.json()`, a 500) and `__proto__` keys (which a record or a
 * spread would drop or turn into a prototype) are `invalid_request` too.
 */
export const jsonBody = <S extends z.ZodType>(schema: S) =>
  described(
    "json",
    schema,
    validator("json", (value, c): z.output<S> => {
      const mediaType = (c.req.header("content-type") ?? "").split(";")[0]?.trim() ?? "";
      if (!jsonMediaType.test(mediaType)) {
        throw new AppError("invalid_request", "Content-Type must be application/json");
      }
      const problem = jsonValueProblem(value);
      if (problem) {
        const field = problem.path.join(".") || undefined;
        throw new AppError("invalid_request", `${field ?? "body"}: ${problem.message}`, { field });
      }
      const result = schema.safeParse(value);
      if (!result.success) throw invalidRequest(result.error);
      return result.data;
    }),
  );

/**
 * For a POST that takes no body: an empty one or `{}` is fine; anything else is `invalid_request`,
 * as an unknown field is for every route that takes one (found by the outside probe: a start of a
 * data export took `{"foo":1}`).
 */
export const noBody = createMiddleware(async (c, next) => {
  const text = (await c.req.raw.clone().text()).trim();
  if (text !== "" && text !== "{}") {
    throw new AppError("invalid_request", "This request takes no body");
  }
  await next();
});

/** Validates the query string the same way. */
export const query = <S extends z.ZodType>(schema: S) =>
  described(
    "query",
    schema,
    validator("query", (value): z.output<S> => {
      const result = schema.safeParse(value);
      if (!result.success) throw invalidRequest(result.error, "query");
      return result.data;
    }),
  );

/**
 * Marks a validator with its schema the way hono-openapi's own `validator()` does, so the OpenAPI
 * document shows the request body or query parameters (http/openapi.ts). Behaviour is unchanged:
 * the marker is a property the generator reads, never called on a request.
 */
function described<M extends object>(target: "json" | "query", schema: z.ZodType, middleware: M) {
  return Object.assign(middleware, {
    [uniqueSymbol]: { target, ...resolver(schema), options: undefined },
  });
}

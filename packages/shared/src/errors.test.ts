import { describe, expect, it } from "vitest";
import { AppError, errorStatus } from "./errors.ts";

describe("AppError", () => {
  it("maps each code of the contract to its status", () => {
    expect(errorStatus).toEqual({
      invalid_request: 400,
      unauthorized: 401,
      insufficient_credits: 402,
      spend_limit: 402,
      forbidden: 403,
      not_found: 404,
      conflict: 409,
      gone: 410,
      payload_too_large: 413,
      rate_limited: 429,
      internal: 500,
    });
    expect(new AppError("gone", "erased").status).toBe(410);
  });

  it("renders the envelope, with the field only when there is one, and keeps the cause out of it", () => {
    const cause = new Error("secret detail");
    const plain = new AppError("not_found", "Project not found", { cause });
    expect(plain.toBody()).toEqual({ error: { code: "not_found", message: "Project not found" } });
    expect(plain.cause).toBe(cause);
    expect(JSON.stringify(plain.toBody())).not.toContain("secret");
    const withField = new AppError("invalid_request", "name: required", { field: "name" });
    expect(withField.toBody()).toEqual({
      error: { code: "invalid_request", message: "name: required", field: "name" },
    });
  });
});

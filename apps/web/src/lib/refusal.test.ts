import { signupSchema } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { ApiError } from "./api.ts";
import {
  asSentence,
  problemSentence,
  problemsBeside,
  problemWords,
  refusalAt,
  refusalOf,
  refusalSentences,
} from "./refusal.ts";

describe("problemWords", () => {
  it("says zod's own English in words a person acts on", () => {
    const said = (message: string) => problemWords(message);
    expect(said("Too small: expected string to have >=1 characters")).toBe("is required");
    expect(said("Too small: expected string to have >=10 characters")).toBe(
      "must be at least 10 characters",
    );
    expect(said("Too big: expected string to have <=100 characters")).toBe(
      "must be at most 100 characters",
    );
    expect(said("Too small: expected array to have >=1 items")).toBe("must have at least 1 item");
    expect(said("Too big: expected array to have <=10 items")).toBe("must have at most 10 items");
    expect(said("Too big: expected number to be <=99")).toBe("must be at most 99");
    expect(said("Too small: expected number to be >0")).toBe("must be more than 0");
    expect(said("Invalid input: expected string, received undefined")).toBe("is required");
    expect(said("Invalid input: expected int, received number")).toBe("must be a whole number");
    expect(said("Invalid input: expected number, received string")).toBe("must be a number");
    expect(said('Invalid option: expected one of "day"|"week"|"month"')).toBe(
      "must be day, week or month",
    );
    expect(said("Invalid input: expected true")).toBe("must be true");
    expect(said("Invalid email address")).toBe("must be a valid email address");
    expect(said("Invalid URL")).toBe("must be a valid URL");
    expect(said('Invalid string: must start with "https://"')).toBe('must start with "https://"');
    expect(said("Invalid input")).toBe("is not valid");
  });

  it("keeps a schema's own words and the Worker's sentences as written", () => {
    expect(problemWords("must be a valid email address")).toBe("must be a valid email address");
    expect(problemWords("An account with this email already exists")).toBe(
      "An account with this email already exists",
    );
  });
});

describe("refusalOf", () => {
  it("takes every issue of the API's answer, without the field name its message starts with", () => {
    const error = new ApiError(
      "invalid_request",
      "password: Too small: expected string to have >=10 characters",
      400,
      "password",
      [
        { field: "password", message: "Too small: expected string to have >=10 characters" },
        { field: "password", message: "must be valid Unicode text (it has an unpaired surrogate)" },
        { field: "name", message: "Too small: expected string to have >=1 characters" },
      ],
    );
    const refusal = refusalOf(error);
    // One problem per field: the first of each is what to fix first.
    expect(refusal.problems).toEqual([
      { field: "password", message: "must be at least 10 characters" },
      { field: "name", message: "is required" },
    ]);
    expect(refusalAt(refusal, "name")).toBe("is required");
  });

  it("reads a refusal of no field, and anything thrown that is not the API's", () => {
    expect(refusalOf(new ApiError("unauthorized", "Invalid email or password", 401))).toEqual({
      field: null,
      message: "Invalid email or password",
    });
    expect(refusalOf(new ApiError("invalid_request", "x", 400, ""))).toMatchObject({
      field: null,
    });
    expect(refusalOf(new Error("internal detail"))).toEqual({
      field: null,
      message: "Something went wrong. Please try again.",
    });
  });
});

describe("where a problem goes", () => {
  const refusal = refusalOf(
    new ApiError("invalid_request", "allowedOrigins.1: must use https", 400, "allowedOrigins.1", [
      { field: "allowedOrigins.1", message: "must use https" },
      { field: "verification.url", message: "must be https on a public host" },
      { field: "invitation", message: "Too small: expected string to have >=1 characters" },
    ]),
  );

  it("finds a problem inside a control's field at that control", () => {
    expect(refusalAt(refusal, "allowedOrigins")).toBe("must use https");
    expect(refusalAt(refusal, "allowed")).toBeNull();
  });

  it("leaves to the alert what no control of the form shows", () => {
    expect(problemsBeside(refusal, ["allowedOrigins", "verification"])).toEqual([
      { field: "invitation", message: "is required" },
    ]);
  });
});

describe("sentences", () => {
  it("ends a clause with one full stop and starts it with a capital", () => {
    expect(asSentence("must be at most 99")).toBe("Must be at most 99.");
    expect(asSentence("Done already.")).toBe("Done already.");
    expect(asSentence("Is it (really)?")).toBe("Is it (really)?");
  });

  it("names the field of a problem the alert says, unless the message does", () => {
    expect(problemSentence({ field: "orgName", message: "is required" })).toBe(
      "The org name is required.",
    );
    expect(problemSentence({ field: "query.from", message: "from must be before to" })).toBe(
      "From must be before to.",
    );
    expect(
      problemSentence({ field: "email", message: "An account with this email already exists" }),
    ).toBe("An account with this email already exists.");
    expect(problemSentence({ field: null, message: "give a name or an email to change" })).toBe(
      "Give a name or an email to change.",
    );
  });

  it("says every problem of the API's own refusal of a sign-up", () => {
    const parsed = signupSchema.safeParse({ email: "ada@", password: "short", name: "" });
    if (parsed.success) throw new Error("expected a refusal");
    const issues = parsed.error.issues.map((issue) => ({
      field: issue.path.join("."),
      message: issue.message,
    }));
    const [first] = issues;
    const message = `${first?.field}: ${first?.message}`;
    const error = new ApiError("invalid_request", message, 400, first?.field, issues);
    expect(refusalSentences(error)).toEqual([
      "The email must be a valid email address.",
      "The password must be at least 10 characters.",
      "The name is required.",
    ]);
  });
});

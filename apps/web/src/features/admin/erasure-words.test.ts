import { describe, expect, it } from "vitest";
import { progress, stepWords, subjectWords } from "./erasure-words.ts";

describe("erasure words", () => {
  it("names every step of the job (STEP_NAMES in the worker) as the store it clears", () => {
    const steps = ["agents", "d1", "ledger", "audit", "stripe", "verify"];
    expect(steps.map((step) => stepWords(step, "member"))).toEqual([
      "Chat transcripts",
      "Account and memberships",
      "Billing ledger (pseudonymised)",
      "Audit log (pseudonymised)",
      "Payment provider",
      "Verification scan",
    ]);
    expect(stepWords("d1", "project")).toBe("Project, its memory and its sessions");
    expect(stepWords("d1", "session")).toBe("Session record");
  });

  it("says what was erased by name while known, else that it is erased", () => {
    expect(subjectWords("member", "Ada Lovelace")).toBe("Ada Lovelace");
    expect(subjectWords("member", undefined)).toBe("Erased member");
    expect(subjectWords("project", undefined)).toBe("Erased project");
  });

  it("counts done and skipped steps as settled", () => {
    const step = (status: "pending" | "done" | "skipped" | "failed") => ({
      name: "x",
      status,
      at: null,
      detail: null,
    });
    expect(progress({ steps: [step("done"), step("skipped"), step("pending")] })).toEqual({
      done: 2,
      total: 3,
    });
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { signed, tokenAttacks } from "./attacks.ts";
import { api, errorCode, type Person, person, snapshot } from "./helpers.ts";

let victim: Person;
beforeAll(async () => {
  victim = await person("victim");
});

const attacks = tokenAttacks(() => victim.id);

describe("token attacks: each is 401 and changes nothing", () => {
  it.each(attacks)("%s", async (_name, make) => {
    const token = await make();
    const before = await snapshot();
    const headers: Record<string, string> =
      token === undefined ? {} : { authorization: `Bearer ${token}` };
    const write = await api("POST", "/api/orgs", { headers, body: { name: "Pwned" } });
    expect(write.status).toBe(401);
    expect(errorCode(write)).toBe("unauthorized");
    const read = await api("GET", "/api/me", { headers });
    expect(read.status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });

  it("the same claims, properly signed, are accepted (so the attacks above fail for their reason)", async () => {
    const res = await api("GET", "/api/me", { token: await signed(victim.id) });
    expect(res.status).toBe(200);
  });
});

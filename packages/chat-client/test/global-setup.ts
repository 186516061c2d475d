/**
 * Starts the fixture once for every test file: the dev model, then the bare agent under
 * `wrangler dev`. Test files read its origin with `inject("fixtureOrigin")`.
 */
import type { TestProject } from "vitest/node";
import { startFixture } from "./helpers.ts";

declare module "vitest" {
  export interface ProvidedContext {
    fixtureOrigin: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fixture = await startFixture();
  project.provide("fixtureOrigin", fixture.origin);
  return () => fixture.close();
}

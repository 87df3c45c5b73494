import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { startFakeOpenAI } from "./fake-openai";

declare module "vitest" {
  interface ProvidedContext {
    fakeOpenAIPort: number;
  }
}

/** Runs in Node before the Workers pool starts: bundle the catalog, start the fake model server. */
export default async function setup(project: TestProject) {
  // The app's catalog plus the fixtures the Durable Object and HTTP tests run.
  // Into the pool's own copy (vitest.config.ts aliases it): a `wrangler dev` started by
  // the e2e tests rebuilds src/generated/worker-files.ts and must not change the pool's.
  // tests/triggers/fixtures stays out of the e2e catalogs: its schedules are not in wrangler.toml's crons, which the build checks.
  execFileSync("node", ["scripts/bundle-workers.mjs", "--out", "src/generated/test-worker-files.ts", "workers", "tests/fixtures/workers", "tests/triggers/fixtures"]);
  const server = await startFakeOpenAI();
  project.provide("fakeOpenAIPort", server.port);
  return () => server.close();
}

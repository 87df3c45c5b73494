import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { startFakeOpenAI } from "./fake-openai";
import { startFakeUpstream } from "./fake-upstream";

declare module "vitest" {
  interface ProvidedContext {
    fakeOpenAIPort: number;
    /** A second provider (tests/fixtures/workers/models.yaml): each server must see only its own key. */
    fakeOpenAI2Port: number;
    fakeUpstreamPorts: [number, number];
  }
}

/** Runs in Node before the Workers pool starts: bundle the catalog, start the fake model server. */
export default async function setup(project: TestProject) {
  // The app's catalog plus the fixtures the Durable Object and HTTP tests run.
  // Into the pool's own copy (vitest.config.ts aliases it): a `wrangler dev` started by
  // the e2e tests rebuilds src/generated/worker-files.ts and must not change the pool's.
  execFileSync("node", ["scripts/bundle-workers.mjs", "--out", "src/generated/test-worker-files.ts", "workers", "tests/fixtures/workers"]);
  const server = await startFakeOpenAI();
  project.provide("fakeOpenAIPort", server.port);
  const second = await startFakeOpenAI();
  project.provide("fakeOpenAI2Port", second.port);
  const upstream = await startFakeUpstream();
  project.provide("fakeUpstreamPorts", upstream.ports);
  return async () => {
    await Promise.all([server.close(), second.close(), upstream.close()]);
  };
}

import { startModelServer } from "edgework/testing/model-server";
import type { TestProject } from "vitest/node";

// The scripted OpenAI-compatible model, in Node; vitest.config.ts hands its port to the app.
export default async function setup(project: TestProject) {
  const server = await startModelServer();
  project.provide("modelServerPort", server.port);
  return () => server.close();
}

declare module "vitest" {
  export interface ProvidedContext {
    modelServerPort: number;
  }
}

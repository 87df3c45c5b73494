import { defineConfig } from "vitest/config";
import { workersProject } from "./vitest.config";

/** Durable Object measurements for `npm run bench` (not part of `npm test`). */
export default defineConfig({
  test: {
    projects: [
      workersProject("bench", ["bench/do/**/*.bench.test.ts"], 300_000),
      // The fault benchmark again with MODEL_DISPATCH=queue (its `faultsQueue` section).
      workersProject("bench-queue", ["bench/do/faults.bench.test.ts"], 300_000, { MODEL_DISPATCH: "queue" }),
    ],
  },
});

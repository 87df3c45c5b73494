import { defineConfig } from "vitest/config";
import { workersProject } from "./vitest.config";

/** Durable Object measurements for `npm run bench` (not part of `npm test`). */
export default defineConfig({
  test: {
    projects: [
      workersProject("bench", ["bench/do/**/*.bench.test.ts"], 300_000, { MODEL_DISPATCH: "direct" }, ["bench/do/live-text.bench.test.ts"]),
      // The fault and dispatch benchmarks again with MODEL_DISPATCH=queue (sections `faultsQueue`, `dispatch_queue`, `dispatch_wait_queue`, `dispatch_recovery`),
      // and live text, a queue-mode measure only (`live_text`).
      workersProject(
        "bench-queue",
        ["bench/do/faults.bench.test.ts", "bench/do/dispatch.bench.test.ts", "bench/do/dispatch-wait.bench.test.ts", "bench/do/live-text.bench.test.ts"],
        300_000,
        { MODEL_DISPATCH: "queue" },
      ),
    ],
  },
});

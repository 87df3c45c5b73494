import { defineConfig } from "vitest/config";
import { workersProject } from "./vitest.config";

/** Durable Object measurements for `npm run bench` (not part of `npm test`). */
export default defineConfig(workersProject("bench", ["bench/do/**/*.bench.test.ts"], 300_000));

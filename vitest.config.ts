import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // The scripted OpenAI-compatible server started by tests/support/global-setup.ts.
        bindings: { FAKE_OPENAI_URL: `http://127.0.0.1:${inject("fakeOpenAIPort")}` },
      },
    })),
  ],
  test: {
    globalSetup: ["tests/support/global-setup.ts"],
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});

import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          // The scripted OpenAI-compatible server started by tests/support/global-setup.ts;
          // it picks the script by the request's model name.
          FAKE_OPENAI_URL: `http://127.0.0.1:${inject("fakeOpenAIPort")}`,
          OPENAI_BASE_URL: `http://127.0.0.1:${inject("fakeOpenAIPort")}/v1`,
          OPENAI_API_KEY: "sk-test",
          API_TOKEN: "test-token",
          // Approval emails on (APPROVER_EMAIL unset: workers without approval.notify get none).
          APPROVAL_FROM: "edgework@example.com",
          APPROVAL_SECRET: "test-approval-secret",
          PUBLIC_URL: "https://edgework.test",
          EDGEWORK_TEST_HOOKS: "1",
        },
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

import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// The app runs in workerd (the Workers vitest pool) with real SQLite Durable Objects;
// its model is the scripted server test/global-setup.ts starts on 127.0.0.1.
export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => {
      const modelServer = `127.0.0.1:${inject("modelServerPort")}`;
      return {
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            MODEL_SERVER_URL: `http://${modelServer}`,
            // `openai:<model>` goes to the model server; the request's model name picks the script.
            OPENAI_BASE_URL: `http://${modelServer}/v1`,
            OPENAI_API_KEY: "sk-test",
            API_TOKEN: "test-token",
            // triage's `github` toolset may reach the model server, whose effect URLs stand in for GitHub's.
            GITHUB_API_HOST: modelServer,
            GITHUB_TOKEN: "test-github-token",
            // As strict as production: mail only to verified addresses (here, these), our Message-IDs replaced on send.
            STRICT_LOCAL: "true",
            EMAIL_ALLOWED_RECIPIENTS: "*@example.com",
          },
        },
      };
    }),
  ],
  test: { globalSetup: ["test/global-setup.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
});

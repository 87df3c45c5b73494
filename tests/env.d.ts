// Bindings that only the test pool adds (vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    /** Base URL of the scripted OpenAI-compatible server on 127.0.0.1. */
    FAKE_OPENAI_URL: string;
  }
}

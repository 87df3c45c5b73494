// Bindings that only the test pool adds (vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    /** Base URL of the scripted OpenAI-compatible server on 127.0.0.1. */
    FAKE_OPENAI_URL: string;
    /** MCP servers on 127.0.0.1: server-everything, a copy that a test kills, our counting server and its control URL. */
    MCP_EVERYTHING_URL: string;
    MCP_DOOMED_URL: string;
    MCP_COUNTING_URL: string;
    MCP_COUNTING_CONTROL: string;
  }
}

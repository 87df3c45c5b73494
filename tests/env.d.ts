// Bindings that only the test pool adds (vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    /** Base URL of the scripted OpenAI-compatible server on 127.0.0.1. */
    FAKE_OPENAI_URL: string;
    /** A second one, for the second provider of tests/fixtures/workers/models.yaml. */
    FAKE_OPENAI_2_URL: string;
    ALPHA_API_KEY: string;
    BETA_API_KEY: string;
    /** `127.0.0.1:<port>` of that server, for allow-lists. */
    FAKE_OPENAI_HOST: string;
    /** Two origins of the fake upstream (tests/support/fake-upstream.ts). */
    FAKE_UPSTREAM_A: string;
    FAKE_UPSTREAM_B: string;
    /** MCP servers on 127.0.0.1: server-everything, a copy that a test kills, our counting server and its control URL. */
    MCP_EVERYTHING_URL: string;
    MCP_DOOMED_URL: string;
    MCP_COUNTING_URL: string;
    MCP_COUNTING_CONTROL: string;
    /** The OTLP receiver on 127.0.0.1 (tests/support/otlp-receiver.ts). */
    OTLP_RECEIVER_URL: string;
    /** The completion-webhook receiver (tests/support/notify-receiver.ts). */
    NOTIFY_RECEIVER_URL: string;
    /** The seed of the seeded interleavings (tests/durable-objects/interleavings.random.test.ts); empty: one from the clock. */
    HARNESS_SEED: string;
  }
}

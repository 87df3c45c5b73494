import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const testCatalog = fileURLToPath(new URL("./src/generated/test-worker-files.ts", import.meta.url));
const testFunctions = fileURLToPath(new URL("./tests/fixtures/functions/index.ts", import.meta.url));
const packageEntry = fileURLToPath(new URL("./src/edgework.ts", import.meta.url));
const jsxRuntime = fileURLToPath(new URL("./src/views/jsx-runtime.ts", import.meta.url));

/**
 * A project in the Workers pool (workerd): the tests here, the Durable Object benchmarks in vitest.bench.config.ts.
 * `vars` over wrangler.toml's (MODEL_DISPATCH: direct for most tests, queue for `*.queue.test.ts`); `exclude` besides the e2e and node tests;
 * `main`: the Worker (default the app), `setupFiles`: what loads it before each test file; `isolate`: a runtime per file (default).
 */
export const workersProject = (
  name: string,
  include: string[],
  testTimeout = 30_000,
  vars: Record<string, string> = {},
  exclude: string[] = [],
  { main = "./tests/support/test-worker.ts", setupFiles = ["tests/support/install-app.ts"], isolate = true } = {},
) => ({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      // The app's entry with the test subclasses of its objects (fault injection, storage stats).
      main,
      miniflare: {
        bindings: {
          // The scripted OpenAI-compatible server started by tests/support/global-setup.ts;
          // it picks the script by the request's model name.
          FAKE_OPENAI_URL: `http://127.0.0.1:${inject("fakeOpenAIPort")}`,
          // For `allow:` lists, which name the port (fixtures use `${FAKE_OPENAI_HOST}`).
          FAKE_OPENAI_HOST: `127.0.0.1:${inject("fakeOpenAIPort")}`,
          // Two origins of tests/support/fake-upstream.ts, for the `http` kind's redirects and streams.
          FAKE_UPSTREAM_A: `http://127.0.0.1:${inject("fakeUpstreamPorts")[0]}`,
          FAKE_UPSTREAM_B: `http://127.0.0.1:${inject("fakeUpstreamPorts")[1]}`,
          OPENAI_BASE_URL: `http://127.0.0.1:${inject("fakeOpenAIPort")}/v1`,
          OPENAI_API_KEY: "sk-test",
          // The openai client reads this from process.env (nodejs_compat fills it with these bindings):
          // no provider may send it (tests/durable-objects/providers.test.ts, model-dispatch.queue.test.ts).
          OPENAI_CUSTOM_HEADERS: "X-From-Env: OPENAI_CUSTOM_HEADERS",
          // Two providers of tests/fixtures/workers/models.yaml, each on its own fake server with its own key.
          FAKE_OPENAI_2_URL: `http://127.0.0.1:${inject("fakeOpenAI2Port")}`,
          ALPHA_API_KEY: "sk-alpha",
          BETA_API_KEY: "sk-beta",
          // MCP servers started by tests/support/global-setup.ts (fixtures use them as ${...}).
          MCP_EVERYTHING_URL: `http://127.0.0.1:${inject("everythingMcpPort")}/mcp`,
          MCP_DOOMED_URL: `http://127.0.0.1:${inject("doomedMcpPort")}/mcp`,
          MCP_COUNTING_URL: `http://127.0.0.1:${inject("countingMcpPort")}/mcp`,
          MCP_COUNTING_CONTROL: `http://127.0.0.1:${inject("countingMcpPort")}/control`,
          // The OTLP receiver of the tracing tests; tracing itself stays off unless a test points a run at it.
          OTLP_RECEIVER_URL: `http://127.0.0.1:${inject("otlpReceiverPort")}`,
          API_TOKEN: "test-token",
          // The seeded interleavings' seed, to run a failing one again (empty: drawn from the clock).
          HARNESS_SEED: process.env.HARNESS_SEED ?? "",
          // Short, so the /mcp test of a run that outlasts the window is quick.
          MCP_WAIT_SECONDS: "2",
          // Approval emails on (APPROVER_EMAIL unset: workers without approval.notify get none).
          APPROVAL_FROM: "edgework@example.com",
          APPROVAL_SECRET: "test-approval-secret",
          PUBLIC_URL: "https://edgework.test",
          // Approval emails carry a Reply-To on this domain; replies go to the email() handler.
          APPROVAL_REPLY_DOMAIN: "reply.edgework.test",
          // Mail as strict as production (src/email/strict-local.ts): only these recipients (as if verified in
          // Email Routing), our Message-IDs replaced on send. A test of another address sees production's refusal.
          STRICT_LOCAL: "true",
          EMAIL_ALLOWED_RECIPIENTS: "*@example.com",
          // Completion webhooks (src/notify): signed with this; allowed to the fake servers on 127.0.0.1 (over http).
          NOTIFY_SECRET: "test-notify-secret",
          NOTIFY_ALLOW_HOSTS: `127.0.0.1:${inject("fakeOpenAIPort")} 127.0.0.1:${inject("notifyReceiverPort")}`,
          NOTIFY_RECEIVER_URL: `http://127.0.0.1:${inject("notifyReceiverPort")}`,
          // Short, so a receiver that never answers is given up on quickly (and retried).
          NOTIFY_TIMEOUT_MS: "2000",
          // Webhook secrets of workers/triggers.yaml and the fixture triggers.
          GITHUB_WEBHOOK_SECRET: "It's a Secret to Everybody",
          STRIPE_WEBHOOK_SECRET: "whsec_test_secret",
          FORM_SECRET: "form-secret",
          // Slack (src/slack): the fake Web API of tests/support/fake-slack.ts, its token, and the signing secret requests carry.
          SLACK_API_BASE: `http://127.0.0.1:${inject("fakeSlackPort")}/api`,
          SLACK_BOT_TOKEN: "xoxb-test-token",
          SLACK_SIGNING_SECRET: "test-slack-signing-secret",
          ...vars,
        },
      },
    })),
  ],
  // The app's catalog plus the test fixtures (written by tests/support/global-setup.ts).
  // The app's code functions plus the test fixtures (tests/fixtures/functions).
  // `edgework`: the package's entry, and `edgework-jsx`: the views' JSX runtime, as tsconfig.json's paths has them.
  resolve: {
    alias: [
      { find: /^edgework$/, replacement: packageEntry },
      { find: /^edgework-jsx\/jsx-(dev-)?runtime$/, replacement: jsxRuntime },
      { find: /^.*\/edgework\.generated$/, replacement: testCatalog },
      { find: /^\.\/functions\/index$/, replacement: testFunctions },
    ],
  },
  test: {
    name,
    globalSetup: ["tests/support/global-setup.ts"],
    setupFiles,
    include,
    exclude: ["tests/e2e/**", "tests/node/**", ...exclude],
    testTimeout,
    hookTimeout: 30_000,
    isolate,
  },
});

/**
 * Files that start no run and touch no Durable Object: they share one runtime (`isolate: false`). Loading the
 * app into a fresh runtime costs ~4 s a file; a file that runs Durable Objects keeps its own runtime, so no
 * object, alarm or run id of another file reaches it.
 */
const UNIT_FILES = [
  "tests/engine/**/*.test.ts",
  "tests/email/html-text.test.ts",
  "tests/email/mime.test.ts",
  "tests/flow/config.test.ts",
  "tests/http/jsx-runtime.test.ts",
  "tests/http/api-contract.test.ts",
  "tests/notify/notify-url.test.ts",
  "tests/schedules/next-cron.test.ts",
  "tests/slack/config.test.ts",
  "tests/tokens/approval-token.test.ts",
  "tests/triggers/cron.test.ts",
  "tests/triggers/dmarc.test.ts",
  "tests/triggers/review2-dmarc.test.ts",
  "tests/triggers/sole-from.test.ts",
];

export default defineConfig({
  test: {
    projects: [
      // The Durable Object tests drive activations themselves, with the model asked inside them (direct).
      // The run's object itself (tests/durable-objects), and the app around it (HTTP, mail, flow, client…):
      // two projects, so CI runs them side by side (.ci/run), each with its own runtime and fake servers.
      workersProject("workers-objects", ["tests/durable-objects/**/*.test.ts"], 30_000, { MODEL_DISPATCH: "direct" }, [
        "tests/**/*.queue.test.ts",
        "tests/**/*.mounted.test.ts",
      ]),
      workersProject("workers", ["tests/**/*.test.ts"], 30_000, { MODEL_DISPATCH: "direct" }, [
        "tests/durable-objects/**",
        "tests/**/*.queue.test.ts",
        "tests/**/*.mounted.test.ts",
        ...UNIT_FILES,
      ]),
      // The files above that touch no Durable Object, in one shared runtime.
      workersProject("workers-unit", UNIT_FILES, 30_000, { MODEL_DISPATCH: "direct" }, [], { isolate: false }),
      // The same app with MODEL_DISPATCH=queue (its own miniflare: vars are per instance).
      workersProject("workers-queue", ["tests/**/*.queue.test.ts"], 30_000, { MODEL_DISPATCH: "queue" }),
      // A consumer Worker that mounts edgework under /agents of its own Hono app (tests/fixtures/mounted).
      workersProject("workers-mounted", ["tests/**/*.mounted.test.ts"], 30_000, { MODEL_DISPATCH: "direct" }, [], {
        main: "./tests/support/mounted-test-worker.ts",
        setupFiles: ["tests/support/install-mounted.ts"],
      }),
      {
        // Plain Node, no app: checks of the repository itself (e.g. the docs' links), which need its files.
        test: { name: "node", environment: "node", include: ["tests/node/**/*.test.ts"] },
      },
      {
        // The app under wrangler dev, driven from Node: a real browser, the demo.
        // Views imported from Node (the waterfall's browser test renders one) use the same JSX runtime.
        resolve: { alias: [{ find: /^edgework-jsx\/jsx-(dev-)?runtime$/, replacement: jsxRuntime }] },
        test: {
          name: "e2e",
          environment: "node",
          include: ["tests/e2e/**/*.test.ts"],
          // Each file runs its own wrangler dev, whose build rewrites the bundled catalog: one at a time.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

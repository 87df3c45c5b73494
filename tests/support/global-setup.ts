import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { startModelServer } from "../../src/testing/model-server";
import { startFakeUpstream } from "./fake-upstream";
import { startFakeSlack } from "./fake-slack";
import { startCountingServer, startEverything } from "./mcp-servers";
import { startNotifyReceiver } from "./notify-receiver";
import { startOtlpReceiver } from "./otlp-receiver";

declare module "vitest" {
  interface ProvidedContext {
    fakeOpenAIPort: number;
    /** A second provider (tests/fixtures/workers/models.yaml): each server must see only its own key. */
    fakeOpenAI2Port: number;
    fakeUpstreamPorts: [number, number];
    everythingMcpPort: number;
    doomedMcpPort: number;
    countingMcpPort: number;
    /** The OTLP receiver of the tracing tests (tests/support/otlp-receiver.ts). */
    otlpReceiverPort: number;
    /** The completion-webhook receiver of the notify tests (tests/support/notify-receiver.ts). */
    notifyReceiverPort: number;
    /** Slack's Web API, faked (tests/support/fake-slack.ts). */
    fakeSlackPort: number;
  }
}

/** Runs in Node before the Workers pool starts: bundle the catalog, start the fake model server. */
export default async function setup(project: TestProject) {
  // The app's catalog plus the fixtures the Durable Object and HTTP tests run.
  // Into the pool's own copy (vitest.config.ts aliases it): a `wrangler dev` started by
  // the e2e tests rebuilds src/edgework.generated.ts and must not change the pool's.
  // tests/triggers/fixtures stays out of the e2e catalogs: its schedules are not in wrangler.toml's crons, which the build checks.
  // tests/fixtures/functions/workers too: they name the fixture functions, which only this pool's catalog has.
  execFileSync("node", [
    "scripts/bundle-workers.mjs",
    "--out",
    "src/generated/test-worker-files.ts",
    "--functions",
    "tests/fixtures/functions/index.ts",
    "workers",
    "tests/fixtures/workers",
    "tests/triggers/fixtures",
    "tests/fixtures/functions/workers",
  ]);
  const server = await startModelServer();
  project.provide("fakeOpenAIPort", server.port);
  const second = await startModelServer();
  project.provide("fakeOpenAI2Port", second.port);
  const upstream = await startFakeUpstream();
  project.provide("fakeUpstreamPorts", upstream.ports);
  // MCP servers: the reference one, a second copy a test kills mid-run, and our counting one.
  const [everything, doomed] = await Promise.all([startEverything(), startEverything()]);
  const counting = await startCountingServer(doomed.child);
  project.provide("everythingMcpPort", everything.port);
  project.provide("doomedMcpPort", doomed.port);
  project.provide("countingMcpPort", counting.port);
  const otlp = await startOtlpReceiver();
  project.provide("otlpReceiverPort", otlp.port);
  const notify = await startNotifyReceiver();
  project.provide("notifyReceiverPort", notify.port);
  const slack = await startFakeSlack();
  project.provide("fakeSlackPort", slack.port);
  return async () => {
    everything.stop();
    doomed.stop();
    await Promise.all([server.close(), second.close(), upstream.close(), counting.close(), otlp.close(), notify.close(), slack.close()]);
  };
}

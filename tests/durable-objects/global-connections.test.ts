import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ToolContextBridge, type GlobalCall, type GlobalResult } from "../../durable-objects/global-toolsets-bridge";
import { http, type ToolContext } from "../../src/engine";

type GlobalRpc = { callTool(call: GlobalCall, bridge: ToolContextBridge): Promise<GlobalResult> };

describe("scope: global instances and the six connections", () => {
  it("every global instance of the object takes its turn in one line: ten instances fetching at once keep six requests waiting for headers", async () => {
    const id = crypto.randomUUID();
    const base = `${env.FAKE_UPSTREAM_A}/${id}`;
    const config = http.config.parse({ allow: [new URL(env.FAKE_UPSTREAM_A).host], timeout_ms: 20_000 }) as Record<string, unknown>;
    const global = env.GLOBAL_TOOLSETS.getByName("global") as unknown as GlobalRpc;
    const bridge = new ToolContextBridge({} as ToolContext);
    const ctx = { runId: "r", callPath: "p", idempotencyKey: "k", depth: 0, workerChain: [] };
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        global.callTool(
          { key: `web${i}:http:${id}`, name: `web${i}`, kind: "http", config, tool: "fetch", args: { url: `${base}/slow/400?n=${i}` }, ctx },
          bridge,
        ),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    const log = (await (await fetch(`${env.FAKE_UPSTREAM_A}/log/${id}`)).json()) as { requests: unknown[]; maxWaiting: number };
    expect(log.requests).toHaveLength(10);
    expect(log.maxWaiting).toBe(6);
  });
});

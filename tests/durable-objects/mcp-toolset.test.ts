import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { modelRequests, script, settle, stub } from "./helpers";

const control = async (path = "", method = "GET") =>
  (await fetch(`${env.MCP_COUNTING_CONTROL}${path}`, { method })).json() as Promise<{ counts: Record<string, number>; version: number }>;
const offered = (request: unknown) => ((request as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name).sort();

describe("mcp toolset in a durable run", () => {
  beforeEach(async () => {
    await control("/reset", "POST");
  });

  it("an unannotated tool asks; after eviction and a changed server, the replay offers the journaled tools and the approved call reaches the server once", async () => {
    await script("mcp-writer", [{ tool_calls: [{ name: "cn_write_note", arguments: { text: "hello" } }] }, { text: "noted" }]);
    const id = "mcp-approve";
    await stub(id).start({ id, worker: "mcp-writer", input: { input: "write" }, approvalMode: "ask", budget: {} });
    const paused = await settle(id);
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.approvals).toMatchObject([{ status: "pending", tool: "cn_write_note", args: { text: "hello" } }]);
    expect((await control()).counts.write_note).toBeUndefined();

    // The server changes its tools meanwhile, and the run's object is evicted.
    await control("/version/2", "POST");
    await abortAllDurableObjects();

    expect((await stub(id).decide(paused.approvals[0]!.id, { decision: "approve", by: "test" })).ok).toBe(true);
    const done = await settle(id);
    expect(done).toMatchObject({ status: "succeeded", output: "noted" });
    expect((await control()).counts.write_note).toBe(1);

    const requests = await modelRequests("mcp-writer");
    expect(requests).toHaveLength(2);
    expect(offered(requests[0])).toEqual(["cn_read_notes", "cn_write_note"]);
    // Not cn_delete_notes, which the server added after the list was journaled.
    expect(offered(requests[1])).toEqual(offered(requests[0]));
    expect(JSON.stringify(requests[1])).toContain("wrote: hello");
  });
});

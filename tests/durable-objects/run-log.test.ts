import { describe, expect, it, vi } from "vitest";
import { script, settle, stub } from "./helpers";

describe("structured run logs", () => {
  it("one JSON line per lifecycle event and per failed step, with ids, status, durations and usage, never input, arguments or output", async () => {
    const id = "log-run";
    const secretInput = "INPUT-7f3a do not log me";
    const secretArg = "ARG-91c2";
    const secretOutput = "OUTPUT-44de";
    // A tool call that fails (the host is not allowed), then the final answer.
    await script("index-a", [
      { tool_calls: [{ id: "bad", name: "fx_fetch", arguments: { url: `https://not-allowed.example/${secretArg}` } }] },
      { text: secretOutput },
    ]);
    const log = vi.spyOn(console, "log");
    try {
      await stub(id).start({
        id,
        worker: "index-a",
        input: { input: secretInput },
        approvalMode: "ask",
        budget: {},
        trigger: { kind: "webhook", name: "github-issues", delivery: "d-1" },
      });
      const done = await settle(id);
      expect(done.status).toBe("succeeded");
      const lines = log.mock.calls
        .map((c) => String(c[0]))
        .filter((l) => l.startsWith('{"edgework"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.run_id === id);
      expect(lines.map((l) => l.edgework)).toEqual(["run_queued", "run_running", "step_failed", "run_succeeded"]);
      for (const l of lines)
        expect(l).toMatchObject({ run_id: id, worker: "index-a", trigger: { kind: "webhook", name: "github-issues" }, run_ms: expect.any(Number) });
      expect(lines[2]).toMatchObject({ status: "running", step: "index-a/turn:1/tool:1" });
      expect(lines[3]).toMatchObject({ status: "succeeded", usage: done.usage });
      const text = JSON.stringify(lines);
      for (const s of [secretInput, secretArg, secretOutput, "not-allowed.example", "d-1"]) expect(text).not.toContain(s);
    } finally {
      log.mockRestore();
    }
  });

  it("a failed run's line carries its error code, not its message", async () => {
    const id = "log-failed";
    await script("index-b", [{ status: 400, body: { error: { message: "MESSAGE-5b1e" } } }]);
    const log = vi.spyOn(console, "log");
    try {
      await stub(id).start({ id, worker: "index-b", input: { input: "x" }, approvalMode: "ask", budget: {} });
      expect((await settle(id)).status).toBe("failed");
      const lines = log.mock.calls.map((c) => String(c[0])).filter((l) => l.includes(`"run_id":"${id}"`));
      const failed = JSON.parse(lines.find((l) => l.includes('"run_failed"'))!);
      expect(failed).toMatchObject({ edgework: "run_failed", status: "failed", error_code: "model_error" });
      expect(lines.join("\n")).not.toContain("MESSAGE-5b1e");
    } finally {
      log.mockRestore();
    }
  });
});

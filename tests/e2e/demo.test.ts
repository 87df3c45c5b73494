import { afterAll, describe, expect, it } from "vitest";
import { startDemo } from "../../scripts/demo/demo.mjs";
import { freePort } from "../../scripts/demo/local-app.mjs";

/** `npm start`'s demo, headless: webhook → paused → links from the emails → approve → comment on the fake GitHub → succeeded. */
describe("the offline demo", () => {
  let demo: Awaited<ReturnType<typeof startDemo>> | undefined;
  afterAll(async () => demo?.stop());

  it("runs end to end", async () => {
    const lines: string[] = [];
    demo = await startDemo({ port: await freePort(), say: (l) => lines.push(l) });
    expect(lines.join("\n")).toMatch(/sent a signed GitHub "issues opened" webhook/);
    const paused = await demo.status();
    expect(paused).toMatchObject({ status: "awaiting_approval", worker: "triage", trigger: { kind: "webhook", name: "github-issues" } });

    // The run paused after summarizer and labeler ran as tools of triage.
    const tree = paused.call_tree;
    expect(
      tree.tools
        .filter((t: { name: string }) => t.name !== "github_fetch")
        .map((t: { calls: Array<{ worker: string }> }) => t.calls[0]!.worker)
        .sort(),
    ).toEqual(["labeler", "summarizer"]);
    expect(demo.approvals).toHaveLength(2);
    expect(demo.approvals.map((a: { approval?: { args: { url: string } } }) => a.approval?.args.url.replace(/^.*\/issues\/42/, "")).sort()).toEqual([
      "/comments",
      "/labels",
    ]);
    expect(demo.github.state.comments).toEqual([]);

    for (const a of demo.approvals) {
      const page = await fetch(a.link);
      expect(page.status).toBe(200);
      const decided = await fetch(a.link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "decision=approve" });
      expect(decided.status).toBe(200);
    }
    let run = await demo.status();
    for (let i = 0; i < 240 && run.status !== "succeeded" && run.status !== "failed"; i++) {
      await new Promise((r) => setTimeout(r, 250));
      run = await demo.status();
    }
    // On failure, say what the run and wrangler dev were doing.
    const context = `run: ${JSON.stringify({ status: run.status, error: run.error, approvals: run.approvals })}\nwrangler dev:\n${demo.app.log().slice(-3000)}`;
    expect(run, context).toMatchObject({ status: "succeeded", output: "Triaged octo-org/notes-app#42: comment done, label done." });
    expect(demo.github.state.comments).toEqual([
      {
        repo: "octo-org/notes-app",
        issue: 42,
        body: expect.stringMatching(/^App crashes when saving an empty note .*\n\nSuggested label: bug — It describes something that is broken\.$/s),
      },
    ]);
    expect(demo.github.state.labels).toEqual([{ repo: "octo-org/notes-app", issue: 42, labels: ["bug"] }]);
    expect((await fetch(demo.runPage)).status).toBe(200);
  }, 120_000);
});

import { env, exports } from "cloudflare:workers";
import { callTool, callTree, decideApproval, modelServer, say, startRun, testClient, toolCalls, waitForStatus } from "edgework/testing";
import { expect, it } from "vitest";

const client = testClient(exports.default, { apiToken: env.API_TOKEN });
const models = modelServer(env.MODEL_SERVER_URL);

it("triage asks its workers, waits for approval before it comments, then comments once", async () => {
  const comments = models.effectUrl("comment");
  // Every worker here uses DEFAULT_MODEL (wrangler.toml): one script, played in order.
  await models.script("gpt-4.1-mini", [
    callTool("summarizer", { input: "Login is broken. The login button does nothing." }),
    say("The login button does nothing."), // summarizer
    callTool("labeler", { title: "Login broken", body: "The login button does nothing." }),
    say('{"label": "bug", "reason": "Something is broken."}'), // labeler
    callTool("github_fetch", { url: comments, method: "POST", body: '{"body": "The login button does nothing. Suggested label: bug"}' }),
    say("Commented on the issue."),
  ]);
  const input = {
    repo: "octo/app",
    number: 7,
    title: "Login broken",
    body: "The login button does nothing.",
    issue_url: "https://api.github.com/repos/octo/app/issues/7",
  };
  const { id } = await startRun(client, { worker: "triage", input });

  const paused = await waitForStatus(client, id, "awaiting_approval");
  expect(paused.approvals).toMatchObject([{ status: "pending", tool: "github_fetch" }]);
  expect(await models.countEffects("comment")).toBe(0);

  await decideApproval(client, id, { decision: "approve" });
  const done = await waitForStatus(client, id, "succeeded");
  expect(done.output).toBe("Commented on the issue.");
  expect(await models.countEffects("comment")).toBe(1);
  expect(toolCalls(await callTree(client, id)).map((t) => t.name)).toEqual(["summarizer", "labeler", "github_fetch"]);
});

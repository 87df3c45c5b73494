// A deterministic OpenAI-compatible model for the offline demo. It plays the three
// flagship workers by reading each request the way a model would: the tools it is
// offered, the output schema, the conversation so far. Real models replace it by
// setting OPENAI_BASE_URL / OPENAI_API_KEY / DEFAULT_MODEL.
import { createServer } from "node:http";

const words = (s, n) => s.split(/\s+/).filter(Boolean).slice(0, n).join(" ");

function labelFor(text) {
  if (/crash|error|broken|fail|bug|exception/i.test(text)) return ["bug", "It describes something that is broken."];
  if (/docs?|documentation|readme|typo/i.test(text)) return ["docs", "It is about the documentation."];
  if (/\?|how do|how can/i.test(text)) return ["question", "It asks for help."];
  return ["feature", "It asks for something new."];
}

/** One reply, as { content } or { tool_calls } for a chat completion request. */
function reply(req) {
  const messages = req.messages;
  const user = messages.find((m) => m.role === "user")?.content ?? "";
  const tools = (req.tools ?? []).map((t) => t.function.name);
  const results = messages.filter((m) => m.role === "tool");
  const call = (name, args, i) => ({ id: `call_${messages.length}_${i}`, type: "function", function: { name, arguments: JSON.stringify(args) } });

  if (req.response_format?.type === "json_schema") {
    const [label, reason] = labelFor(user);
    return { content: JSON.stringify({ label, reason }) };
  }
  if (!tools.includes("labeler")) return { content: `${words(user.replace(/\s+/g, " "), 25)}`.replace(/[.\s]*$/, ".") };

  const issue = JSON.parse(user);
  if (results.length === 0) {
    return {
      tool_calls: [
        call("summarizer", { input: `${issue.title}\n\n${issue.body ?? ""}` }, 1),
        call("labeler", { title: issue.title, body: issue.body ?? null }, 2),
      ],
    };
  }
  if (results.length === 2) {
    const summary = results.find((r) => !r.content.startsWith("{"))?.content ?? "";
    const { label, reason } = JSON.parse(results.find((r) => r.content.startsWith("{"))?.content ?? '{"label":"feature","reason":""}');
    return {
      tool_calls: [
        call(
          "github_fetch",
          { url: `${issue.issue_url}/comments`, method: "POST", body: JSON.stringify({ body: `${summary}\n\nSuggested label: ${label} — ${reason}` }) },
          1,
        ),
        call("github_fetch", { url: `${issue.issue_url}/labels`, method: "POST", body: JSON.stringify({ labels: [label] }) }, 2),
      ],
    };
  }
  const outcomes = results.slice(2).map((r) => (r.content.startsWith("Error:") ? `not done (${r.content.slice(7)})` : "done"));
  return { content: `Triaged ${issue.repo}#${issue.number}: comment ${outcomes[0]}, label ${outcomes[1]}.` };
}

export async function startDemoModel() {
  let requests = 0;
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "not found" } }));
    }
    const body = JSON.parse(raw);
    const message = { role: "assistant", content: null, ...reply(body) };
    requests++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `demo-${requests}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, finish_reason: message.tool_calls ? "tool_calls" : "stop", message }],
        usage: { prompt_tokens: Math.ceil(raw.length / 4), completion_tokens: 40 },
      }),
    );
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}/v1`, requests: () => requests, close: () => new Promise((r) => server.close(r)) };
}

// A small stand-in for the GitHub REST API on 127.0.0.1: issue comments and labels,
// checked against a token, remembered for the demo (and its test) to show.
import { createServer } from "node:http";

/** @param {{ token: string }} opts */
export async function startFakeGitHub(opts) {
  /** @type {{ comments: Array<{ repo: string, issue: number, body: string }>, labels: Array<{ repo: string, issue: number, labels: string[] }> }} */
  const state = { comments: [], labels: [] };
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const send = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && req.url === "/__demo/state") return send(200, state);
    if (req.headers.authorization !== `Bearer ${opts.token}`) return send(401, { message: "Bad credentials" });
    const m = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/(comments|labels)$/.exec(req.url ?? "");
    if (!m || req.method !== "POST") return send(404, { message: "Not Found" });
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(400, { message: "Problems parsing JSON" });
    }
    const [, repo, issue] = m;
    if (m[3] === "comments") {
      if (typeof body.body !== "string") return send(422, { message: "body is required" });
      state.comments.push({ repo, issue: Number(issue), body: body.body });
      return send(201, {
        id: state.comments.length,
        body: body.body,
        html_url: `https://github.com/${repo}/issues/${issue}#issuecomment-${state.comments.length}`,
      });
    }
    if (!Array.isArray(body.labels)) return send(422, { message: "labels is required" });
    state.labels.push({ repo, issue: Number(issue), labels: body.labels });
    return send(
      200,
      body.labels.map((name) => ({ name })),
    );
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}`, state, close: () => new Promise((r) => server.close(r)) };
}

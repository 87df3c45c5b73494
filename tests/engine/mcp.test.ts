import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CatalogError, files, loadCatalog, mcp, toolsetRegistry, type Model, type ModelRequest, type ModelResponse } from "../../src/engine";
import { parseYaml } from "../../src/build/yaml";
import { harness, workerFile } from "./helpers";

type Call = { name: string; args: unknown };

/** Calls the given tools on its first turn, then answers; keeps every request. `before` runs ahead of the tool-calling reply. */
function recordingModel(calls: Call[], before?: () => Promise<void>): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async request(req): Promise<ModelResponse> {
      requests.push(structuredClone(req));
      const usage = { inputTokens: 1, outputTokens: 1 };
      if (requests.length > 1) return { text: "done", toolCalls: [], usage };
      await before?.();
      return { text: null, toolCalls: calls.map((c, i) => ({ id: `c${i}`, name: c.name, arguments: JSON.stringify(c.args) })), usage };
    },
  };
}

const toolMessages = (m: { requests: ModelRequest[] }) => m.requests[1]!.messages.filter((x) => x.role === "tool").map((x) => x.content);

function run(toolset: string, model: Model) {
  const h = harness({ "w.worker": workerFile(`name: w\nmodel: test:mcp\ntoolsets:\n  ${toolset}`) }, { kinds: [mcp], models: { "test:mcp": model } });
  h.config.vars = env as unknown as Record<string, string>;
  return h.run({ worker: "w", input: { input: "go" }, approvalMode: "approve_all" });
}

describe("mcp toolset against @modelcontextprotocol/server-everything", () => {
  const host = new URL(env.MCP_EVERYTHING_URL).host;

  it("lists the server's tools with the instance prefix, filtered by name and glob, read-only ones allowed", async () => {
    const model = recordingModel([{ name: "ev_echo", args: { message: "hi" } }]);
    const out = await run(`ev: { use: mcp, url: "\${MCP_EVERYTHING_URL}", tools: [echo, "get-s*"] }`, model);
    expect(out.status).toBe("succeeded");
    expect(model.requests[0]!.tools.map((t) => t.name).sort()).toEqual(["ev_echo", "ev_get-structured-content", "ev_get-sum"]);
    const echo = model.requests[0]!.tools.find((t) => t.name === "ev_echo")!;
    expect(echo.description).toBe("Echoes back the input string");
    expect(echo.parameters).toMatchObject({ type: "object", properties: { message: { type: "string" } } });
    expect(toolMessages(model)).toEqual(["Echo: hi"]);
  });

  it("round-trips structured content (checked against the tool's output schema) and an image as a placeholder", async () => {
    const model = recordingModel([
      { name: "ev_get-structured-content", args: { location: "Chicago" } },
      { name: "ev_get-tiny-image", args: {} },
    ]);
    await run(`ev: { use: mcp, url: "\${MCP_EVERYTHING_URL}" }`, model);
    const [structured, image] = toolMessages(model);
    expect(JSON.parse(structured!)).toMatchObject({ structured_content: { temperature: expect.any(Number), conditions: expect.any(String) } });
    expect(image).toMatch(/\[image: image\/png, \d+ bytes, not shown\]/);
  });

  it("turns isError into a tool error that names the server", async () => {
    const model = recordingModel([{ name: "ev_echo", args: { message: 42 } }]);
    await run(`ev: { use: mcp, url: "\${MCP_EVERYTHING_URL}" }`, model);
    expect(toolMessages(model)[0]).toMatch(new RegExp(`^Error: MCP server "ev" \\(${host}\\): .*message`, "s"));
  });

  it("a server that dies mid-run gives a tool error naming it and the failure", async () => {
    const doomed = env.MCP_DOOMED_URL;
    const kill = async () => {
      await fetch(`${env.MCP_COUNTING_CONTROL}/kill-doomed`, { method: "POST" });
      for (
        let i = 0;
        i < 50 &&
        (await fetch(doomed).then(
          () => true,
          () => false,
        ));
        i++
      )
        await new Promise((r) => setTimeout(r, 100));
    };
    const model = recordingModel([{ name: "dm_echo", args: { message: "anyone?" } }], kill);
    const out = await run(`dm: { use: mcp, url: "\${MCP_DOOMED_URL}", timeout_ms: 5000 }`, model);
    expect(model.requests[0]!.tools.map((t) => t.name)).toContain("dm_echo");
    expect(toolMessages(model)[0]).toMatch(new RegExp(`^Error: MCP server "dm" \\(${new URL(doomed).host}\\): calling echo failed: \\S`));
    expect(out.status).toBe("succeeded");
  });

  it("refuses a plain-http URL that is not loopback when the catalog loads", () => {
    expect(mcp.config.safeParse({ url: "http://mcp.example.com/mcp" }).success).toBe(false);
    expect(mcp.config.safeParse({ url: "https://user:pw@mcp.example.com/mcp" }).success).toBe(false);
    expect(mcp.config.safeParse({ url: "https://mcp.example.com/mcp" }).success).toBe(true);
  });
});

describe("hostile MCP servers", () => {
  const at = (mode: string) => new URL(`/hostile/${mode}/mcp`, env.MCP_COUNTING_URL).href;
  const hits = async (mode: string) =>
    ((await (await fetch(env.MCP_COUNTING_CONTROL)).json()) as { counts: Record<string, number> }).counts[`hostile:${mode}`] ?? 0;

  it("an outputSchema pattern that backtracks is skipped: the call answers within timeout_ms", async () => {
    const model = recordingModel([{ name: "hx_match", args: {} }]);
    const started = Date.now();
    const out = await run(`hx: { use: mcp, url: "${at("regex")}", timeout_ms: 4000 }`, model);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(out.status).toBe("succeeded");
    expect(JSON.parse(toolMessages(model)[0]!)).toEqual({ text: "see structuredContent", structured_content: { s: `${"a".repeat(40)}!` } });
  });

  it("an outputSchema whose $refs blow up is refused when the tools are listed, naming the tool and the bound", async () => {
    const out = await run(`hb: { use: mcp, url: "${at("blowup")}" }`, recordingModel([]));
    expect(out).toMatchObject({ status: "failed", error: { code: "config" } });
    expect((out as { error: { message: string } }).error.message).toMatch(
      /MCP server "hb" \(127\.0\.0\.1:\d+\): the output schema of tool "deep" expands to more than 4000 JSON values with its \$refs followed/,
    );
  });

  it("structured content that does not match the tool's output schema, or is missing, is a tool error naming the server and the reason", async () => {
    for (const [mode, reason] of [
      ["mismatch", /Structured content does not match the tool's output schema: .*n/],
      ["unstructured", /Tool count has an output schema but did not return structured content/],
    ] as const) {
      const model = recordingModel([{ name: "hm_count", args: {} }]);
      const out = await run(`hm: { use: mcp, url: "${at(mode)}" }`, model);
      expect(out.status).toBe("succeeded");
      expect(toolMessages(model)[0]).toMatch(/^Error: MCP server "hm" \(127\.0\.0\.1:\d+\): calling count failed: /);
      expect(toolMessages(model)[0]).toMatch(reason);
    }
  });

  it("a redirect, even to the same origin, is not followed: an error naming the server, and no second request", async () => {
    const before = { redirect: await hits("redirect"), redirected: await hits("redirected") };
    const out = await run(`hr: { use: mcp, url: "${at("redirect")}" }`, recordingModel([]));
    expect(out).toMatchObject({ status: "failed", error: { code: "config" } });
    expect((out as { error: { message: string } }).error.message).toMatch(
      /MCP server "hr" \(127\.0\.0\.1:\d+\): connecting failed: .*answered with a redirect \(307 to http:\/\/127\.0\.0\.1:\d+\/hostile\/redirected\/mcp\); redirects are not followed here/,
    );
    expect(await hits("redirect")).toBe(before.redirect + 1);
    expect(await hits("redirected")).toBe(before.redirected);
  });
});

describe("mcp toolset in the catalog", () => {
  const load = (lines: string) => () => loadCatalog({ "w.worker": workerFile(`name: w\n${lines}`) }, toolsetRegistry(files, mcp), parseYaml);

  it("accepts approval policies for the instance's tools, known only at run time, and still refuses other unknown names", () => {
    expect(load(`toolsets:\n  gh: { use: mcp, url: "https://mcp.example.com/mcp" }\napproval:\n  gh_add_comment: ask`)).not.toThrow();
    expect(load(`toolsets:\n  gh: { use: mcp, url: "https://mcp.example.com/mcp" }\napproval:\n  other_tool: ask`)).toThrow(
      /w.worker: approval.other_tool: no tool "other_tool"/,
    );
  });

  it("refuses scope global, naming file and field", () => {
    const err = (() => {
      try {
        load(`toolsets:\n  gh: { use: mcp, url: "https://mcp.example.com/mcp", scope: global }`)();
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CatalogError);
    expect((err as Error).message).toContain('w.worker: toolsets.gh.scope: kind "mcp" lists its tools during each run');
  });
});

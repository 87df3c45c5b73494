import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineToolset, executeRun, MemoryJournalStore, scriptedModel, tool, type ModelRequest, type ToolsetKind } from "../../src/engine";
import { redactor } from "../../src/engine/toolsets/redactor";
import { harness, warnings, workerFile } from "./helpers";

/** A secret with a quote, a slash, a space and non-ASCII: its raw, JSON and URL forms all differ. */
const TOKEN = 'tok"en/wert ä-1234';
const forms = (v: string) => [v, JSON.stringify(v).slice(1, -1), encodeURIComponent(v), encodeURIComponent(v).replaceAll("%20", "+")];

/** An upstream stand-in: its tools echo the configured header back in every form an upstream might. */
const echoKind = defineToolset({
  kind: "echo",
  config: z.strictObject({
    header: z.string(),
    region: z.string().default(""),
    // A kind whose complaint quotes the value it refused, as many do.
    api_key: z
      .string()
      .refine((v) => /^[\x20-\x7e]*$/.test(v), { error: (issue) => `must be printable ASCII, got "${String(issue.input)}"` })
      .optional(),
  }),
  create: (c) => c,
  close: (c) => {
    throw new Error(`could not log out ${c.header}`);
  },
  tools: {
    echo: tool({
      description: "echoes the header",
      input: z.strictObject({}),
      readOnly: true,
      run: (_a, _ctx, c: { header: string; region: string }) => ({
        headers: { Authorization: c.header, [c.header]: "as a key" },
        list: [c.header, { deep: [c.header] }],
        json: JSON.stringify({ authorization: c.header }),
        url: `https://upstream.test/?auth=${encodeURIComponent(c.header)}`,
        form: `auth=${encodeURIComponent(c.header).replaceAll("%20", "+")}`,
        region: c.region,
      }),
    }),
    fail: tool({
      description: "fails, quoting the header",
      input: z.strictObject({}),
      readOnly: true,
      run: (_a, _ctx, c: { header: string }) => {
        throw new Error(`401 for ${c.header}`);
      },
    }),
    memo: tool({
      description: "memoizes the header",
      input: z.strictObject({}),
      readOnly: true,
      run: async (_a, ctx, c: { header: string }) => `memo: ${await ctx.step("h", () => c.header)}`,
    }),
  },
});

const toolResults = (reqs: ModelRequest[]) => reqs.flatMap((r) => r.messages.flatMap((m) => (m.role === "tool" ? [m.content] : [])));

describe("redaction of resolved ${NAME} values", () => {
  it("covers the raw value, its JSON-escaped and URL-encoded forms; values under 8 characters are left alone", () => {
    const redact = redactor([
      { name: "TOKEN", value: TOKEN },
      { name: "SHORT", value: "eu-1" },
    ]);
    for (const f of forms(TOKEN)) expect(redact(`a ${f} b`)).toBe("a [redacted:TOKEN] b");
    expect(redact("region eu-1")).toBe("region eu-1");
    // A value that contains another is replaced whole.
    expect(
      redactor([
        { name: "A", value: "abcdefgh" },
        { name: "B", value: "abcdefgh-ijkl" },
      ])("x abcdefgh-ijkl abcdefgh"),
    ).toBe("x [redacted:B] [redacted:A]");
  });

  for (const scope of ["call", "run", "global"] as const) {
    it(`scope ${scope}: results (deep, keys too), errors and ctx.step values never carry the secret into the journal or to the model`, async () => {
      const requests: ModelRequest[] = [];
      const model = scriptedModel((req, n) => {
        requests.push(req);
        return n === 0 ? { toolCalls: ["echo", "fail", "memo"].map((name) => ({ id: name, name: `up_${name}`, args: {} })) } : { text: "done" };
      });
      const file = workerFile(
        `name: w\nmodel: test:m\ntoolsets:\n  up: { use: echo, scope: ${scope}, header: "Bearer \${TOKEN}", region: "\${REGION}-\${ZONE:-zone-a-long}" }`,
      );
      const h = harness({ "w.worker": file }, { kinds: [echoKind], models: { "test:m": model } });
      const store = new MemoryJournalStore();
      const out = await executeRun({ ...h.config, vars: { TOKEN, REGION: "eu-1" } }, store, { runId: `redact-${scope}`, worker: "w", input: { input: "x" } });
      expect(out.status).toBe("succeeded");

      const journal = JSON.stringify([...store.entries]);
      const seen = JSON.stringify(requests);
      for (const f of forms(TOKEN)) {
        expect(journal, `journal, form ${f}`).not.toContain(f);
        expect(seen, `model requests, form ${f}`).not.toContain(f);
      }
      const [echo, fail, memo] = [1, 2, 3].map((i) => store.entries.get(`w/turn:1/tool:${i}/result`) as any);
      expect(echo.value).toEqual({
        headers: { Authorization: "Bearer [redacted:TOKEN]", "Bearer [redacted:TOKEN]": "as a key" },
        list: ["Bearer [redacted:TOKEN]", { deep: ["Bearer [redacted:TOKEN]"] }],
        json: '{"authorization":"Bearer [redacted:TOKEN]"}',
        url: "https://upstream.test/?auth=Bearer%20[redacted:TOKEN]",
        form: "auth=Bearer+[redacted:TOKEN]",
        // Short values and defaults written in the file are not secrets to redact.
        region: "eu-1-zone-a-long",
      });
      expect(fail).toMatchObject({ ok: false, error: "401 for Bearer [redacted:TOKEN]" });
      expect(memo).toMatchObject({ ok: true, value: "memo: Bearer [redacted:TOKEN]" });
      expect(store.entries.get("w/turn:1/tool:3/step:h")).toBe("Bearer [redacted:TOKEN]");
      expect(toolResults(requests)).toContain("Error: 401 for Bearer [redacted:TOKEN]");
      if (scope === "call") expect(warnings.at(-1)).toContain("could not log out Bearer [redacted:TOKEN]");
      expect(warnings.join("\n")).not.toContain(TOKEN);
    });
  }

  it("plain vars (wrangler.toml [vars]: config.plainVars) are shown; secrets are not, nor a plain var whose value a secret shares", async () => {
    const file = workerFile(`name: w\nmodel: test:m\ntoolsets:\n  up: { use: echo, header: "Bearer \${TOKEN}", region: "\${REGION}" }`);
    const echoed = async (vars: Record<string, string>, plainVars: string[]) => {
      const h = harness(
        { "w.worker": file },
        { kinds: [echoKind], models: { "test:m": scriptedModel([{ toolCalls: [{ id: "e", name: "up_echo", args: {} }] }, { text: "done" }]) } },
      );
      const store = new MemoryJournalStore();
      await executeRun({ ...h.config, vars, plainVars }, store, { runId: "plain-vars", worker: "w", input: { input: "x" } });
      return (store.entries.get("w/turn:1/tool:1/result") as { value: { region: string; list: string[] } }).value;
    };
    expect(await echoed({ TOKEN, REGION: "eu-west-region-1" }, ["REGION"])).toMatchObject({
      region: "eu-west-region-1",
      list: ["Bearer [redacted:TOKEN]", expect.anything()],
    });
    // A plain var's name on a secret's value: redacted (and so is any name the build does not know as a var).
    expect(await echoed({ TOKEN, REGION: "eu-west-region-1", BACKUP_KEY: "eu-west-region-1" }, ["REGION"])).toMatchObject({ region: "[redacted:REGION]" });
    expect(await echoed({ TOKEN, REGION: "eu-west-region-1" }, [])).toMatchObject({ region: "[redacted:REGION]" });
  });

  it("a config the kind refuses after filling in variables names the field without the resolved value", async () => {
    const file = workerFile(`name: w\nmodel: test:m\ntoolsets:\n  up: { use: echo, header: "x", api_key: "\${TOKEN}" }`);
    const h = harness({ "w.worker": file }, { kinds: [echoKind], models: { "test:m": scriptedModel([{ text: "never" }]) } });
    const out = await executeRun({ ...h.config, vars: { TOKEN } }, new MemoryJournalStore(), { runId: "redact-config", worker: "w", input: { input: "x" } });
    expect(out).toMatchObject({
      status: "failed",
      error: { code: "config", message: 'w.worker: toolsets.up: after filling in variables: api_key: must be printable ASCII, got "[redacted:TOKEN]"' },
    });
  });

  /** A dynamic kind (like an MCP server): the listing itself is upstream text, quoting the credential. */
  const listingKind = (fails: boolean): ToolsetKind => ({
    kind: "listing",
    description: "lists tools from an upstream",
    scope: "call",
    config: z.strictObject({ header: z.string() }),
    definitions: [],
    dynamic: true,
    async instantiate(id, raw) {
      const { header } = raw as { header: string };
      return {
        id,
        async listTools() {
          if (fails) throw new Error(`Error POSTing to endpoint: bad auth: ${header}`);
          return [
            {
              name: "t",
              description: `call with ${header}`,
              parameters: { type: "object", properties: {}, description: header },
              readOnly: true,
              approval: () => "allow" as const,
            },
          ];
        },
        callTool: async () => "ok",
      };
    },
  });

  for (const fails of [false, true]) {
    it(`a dynamic kind's tool list ${fails ? "error" : "(descriptions, schemas)"} is redacted too`, async () => {
      const requests: ModelRequest[] = [];
      const model = scriptedModel((req) => (requests.push(req), { text: "done" }));
      const file = workerFile(`name: w\nmodel: test:m\ntoolsets:\n  up: { use: listing, header: "Bearer \${TOKEN}" }`);
      const h = harness({ "w.worker": file }, { kinds: [listingKind(fails)], models: { "test:m": model } });
      const store = new MemoryJournalStore();
      const out = await executeRun({ ...h.config, vars: { TOKEN } }, store, { runId: `redact-list-${fails}`, worker: "w", input: { input: "x" } });
      const everything = JSON.stringify([out, [...store.entries], requests]);
      for (const f of forms(TOKEN)) expect(everything).not.toContain(f);
      if (fails) expect(JSON.stringify(out)).toContain("bad auth: Bearer [redacted:TOKEN]");
      else
        expect(requests[0]!.tools[0]).toMatchObject({
          description: "call with Bearer [redacted:TOKEN]",
          parameters: { description: "Bearer [redacted:TOKEN]" },
        });
    });
  }

  /** A kind that asks and waits with upstream text quoting its credential, as one passing a response on would. */
  const waitingKind = defineToolset({
    kind: "waiting",
    config: z.strictObject({ header: z.string() }),
    create: (c) => c,
    tools: {
      ask: tool({
        description: "asks a person",
        input: z.strictObject({}),
        readOnly: true,
        run: async (_a, ctx, c: { header: string }) => ctx.askHuman({ question: `upstream said: 401 for ${c.header}` }),
      }),
      nap: tool({
        description: "sleeps",
        input: z.strictObject({}),
        readOnly: true,
        run: async (_a, ctx, c: { header: string }) => {
          await ctx.sleep("1m", { reason: `retrying ${encodeURIComponent(c.header)}` });
          await ctx.sleepUntil(Date.now() + 60_000, { reason: `retrying ${c.header}` });
        },
      }),
      hook: tool({
        description: "waits for an event",
        input: z.strictObject({ keyed: z.boolean() }),
        readOnly: true,
        run: async ({ keyed }, ctx, c: { header: string }) =>
          ctx.waitForEvent("done", { timeout: "5m", reason: `callback for ${c.header}`, ...(keyed ? { key: `job-${c.header}` } : {}) }),
      }),
    },
  });

  it("questions and wait reasons of an instance with secrets are redacted; a waitForEvent key holding one is refused, naming the tool", async () => {
    const calls = [
      { id: "a", name: "up_ask", args: {} },
      { id: "n", name: "up_nap", args: {} },
      { id: "h", name: "up_hook", args: { keyed: false } },
      { id: "k", name: "up_hook", args: { keyed: true } },
    ];
    const file = workerFile(`name: w\nmodel: test:m\ntoolsets:\n  up: { use: waiting, header: "Bearer \${TOKEN}" }`);
    const h = harness({ "w.worker": file }, { kinds: [waitingKind], models: { "test:m": scriptedModel([{ toolCalls: calls }, { text: "done" }]) } });
    const seen: unknown[] = [];
    const store = new MemoryJournalStore();
    const config = {
      ...h.config,
      vars: { TOKEN },
      recordApproval: (a: unknown) => void seen.push(a),
      notifier: async (p: unknown) => void seen.push(p),
      recordWait: (w: unknown) => void seen.push(w),
    };
    const out = await executeRun(config, store, { runId: "redact-waits", worker: "w", input: { input: "x" } });
    // A question, timers and an event wait: each ends by itself, so the run is `waiting`.
    expect(out.status).toBe("waiting");
    const everything = JSON.stringify([out, seen, [...store.entries]]);
    for (const f of forms(TOKEN)) expect(everything, `form ${f}`).not.toContain(f);
    expect(everything).toContain("upstream said: 401 for Bearer [redacted:TOKEN]");
    expect(seen.flatMap((w: any) => (w.kind === "sleep" || w.kind === "event" ? [w.reason] : []))).toEqual(
      expect.arrayContaining(["retrying Bearer%20[redacted:TOKEN]", "callback for Bearer [redacted:TOKEN]"]),
    );
    expect(store.entries.get("w/turn:1/tool:4/result")).toMatchObject({
      ok: false,
      error: expect.stringContaining("hook: ctx.waitForEvent key holds the value of TOKEN"),
    });
  });
});

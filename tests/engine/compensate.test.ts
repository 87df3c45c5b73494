import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { CatalogError, MemoryJournalStore, RunError, scriptedModel } from "../../src/engine";
import { defineToolset, tool } from "../../src/engine/toolsets/define";
import { undoArgs } from "../../src/engine/toolsets/compensate-config";
import { harness, workerFile } from "./helpers";

const host = new URL(env.FAKE_UPSTREAM_A).host;

const load = (toolsets: string) => {
  try {
    harness({ "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n${toolsets}`) });
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return (err as CatalogError).problems.map((p) => p.message);
  }
  return [];
};
const http = (compensate: string) => load(`  api: { use: http, allow: ["${host}"], compensate: ${compensate} }`);

describe("compensate: in a worker file", () => {
  it("is checked when the catalog loads, naming the file and the field", () => {
    expect(http('{ fetch: { tool: fetch, args: { url: "${result.body.href}", method: DELETE } } }')).toEqual([]);
    expect(http("{ nope: { tool: fetch } }")).toEqual(['w.worker: toolsets.api.compensate.nope: kind "http" has no tool "nope"; it has: fetch']);
    expect(http("{ fetch: { tool: nope } }")).toEqual(['w.worker: toolsets.api.compensate.fetch.tool: kind "http" has no tool "nope"; it has: fetch']);
    expect(http('{ fetch: { tool: fetch, args: { url: "${env.SECRET}" } } }')).toEqual([
      expect.stringMatching(/^w\.worker: toolsets\.api\.compensate\.fetch\.args\.url: must be \$\{args/),
    ]);
    expect(http('{ fetch: { tool: fetch, args: { url: "${result.a.b.c.d.e.f.g.h.i}" } } }')).toEqual([
      expect.stringMatching(/^w\.worker: toolsets\.api\.compensate\.fetch\.args\.url: /),
    ]);
    expect(http("{ fetch: { tool: fetch, run: code } }")).toEqual(["w.worker: toolsets.api.compensate.fetch.run: unknown key"]);
    expect(http(`{ fetch: { tool: fetch, args: { url: "${"x".repeat(300)}" } } }`)).toEqual([expect.stringMatching(/compensate\.fetch\.args\.url: /)]);
    const many = Array.from({ length: 17 }, (_, i) => `a${i}: 1`).join(", ");
    expect(http(`{ fetch: { tool: fetch, args: { ${many} } } }`)).toEqual([expect.stringMatching(/compensate\.fetch\.args: at most 16 arguments/)]);
  });
});

describe("undoArgs", () => {
  it("takes whole values from the call's arguments and result, reading JSON text on the way", () => {
    const result = { status: 201, body: JSON.stringify({ id: 7, links: { self: "https://x/7" } }) };
    expect(
      undoArgs({ id: "${result.body.id}", url: "${result.body.links.self}", repo: "${args.repo}", method: "DELETE", n: 1 }, { repo: "r" }, result),
    ).toEqual({
      id: 7,
      url: "https://x/7",
      repo: "r",
      method: "DELETE",
      n: 1,
    });
  });

  it("refuses a path that names nothing, an inherited property, or arguments too big for a journal row", () => {
    expect(() => undoArgs({ id: "${result.id}" }, {}, { other: 1 })).toThrow("${result.id}: the call's result has nothing there");
    expect(() => undoArgs({ c: "${args.constructor}" }, {}, {})).toThrow(/nothing there/);
    expect(() => undoArgs({ all: "${result}" }, {}, "x".repeat(20_000))).toThrow(/over 16384 characters/);
    // An upstream's answer fills in values, never whole objects or lists (review 5).
    expect(() => undoArgs({ headers: "${result.body}" }, {}, { body: { Authorization: "x" } })).toThrow(/holds an object there/);
    expect(() => undoArgs({ ids: "${result.ids}" }, {}, { ids: [1, 2] })).toThrow(/holds a list there/);
    expect(undoArgs({ h: "${args.headers}" }, { headers: { a: "1" } }, {})).toEqual({ h: { a: "1" } });
  });

  it("never sets a prototype: a `__proto__` name or value stays an own property", () => {
    const out = undoArgs({ __proto__: "${args.p}" } as Record<string, unknown>, JSON.parse('{"p": {"polluted": true}}'), {});
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("undoing a failed run's effects (engine)", () => {
  it("a run whose undo cannot be made still fails, saying how many effects stayed made", async () => {
    const store = new MemoryJournalStore();
    const h = harness(
      {
        "w.worker": workerFile(
          `name: w\nmodel: test:m\ntoolsets:\n  api: { use: http, allow: ["${host}"], compensate: { fetch: { tool: fetch, args: { url: "\${result.body.missing}" } } } }\napproval:\n  api_fetch: allow`,
        ),
      },
      {
        models: {
          "test:m": scriptedModel((_, n) => {
            if (n > 0) throw new RunError("model_error", "provider down");
            return {
              toolCalls: [{ id: "c1", name: "api_fetch", args: { url: `${env.FAKE_UPSTREAM_A}/${crypto.randomUUID()}/echo`, method: "POST", body: "{}" } }],
            };
          }),
        },
      },
    );
    const outcome = await h.run({ worker: "w", input: { input: "x" } }, store);
    expect(outcome).toMatchObject({ status: "failed", error: { message: expect.stringContaining("1 of its effects could not be undone") } });
  });
});

describe("a kind's code says what undoes a tool (`undo` of defineToolset's tool)", () => {
  /** A shop kind in code: `place` makes an order (an effect its code knows how to undo), `cancel` undoes one. */
  const made: string[] = [];
  const shop = defineToolset({
    kind: "shop",
    config: z.object({}),
    create: () => ({}),
    tools: {
      place: tool({
        description: "place an order",
        input: z.object({ item: z.string() }),
        approval: "allow",
        run: ({ item }) => {
          made.push(`place ${item}`);
          return { id: `order-${item}` };
        },
        // The item "gift" needs no undo; "odd" names a tool the kind lacks; "boom" throws.
        undo: ({ item }, result) =>
          item === "gift"
            ? undefined
            : item === "odd"
              ? { tool: "refund", args: {} }
              : item === "boom"
                ? (() => {
                    throw new Error("no id");
                  })()
                : { tool: "cancel", args: { id: (result as { id: string }).id } },
      }),
      cancel: tool({
        description: "cancel an order",
        input: z.object({ id: z.string() }),
        approval: "allow",
        run: ({ id }) => {
          made.push(`cancel ${id}`);
          return "cancelled";
        },
      }),
    },
  });
  const placing = (items: string[]) =>
    scriptedModel((_, n) => {
      if (n >= items.length) throw new RunError("model_error", "provider down");
      return { toolCalls: [{ id: `c${n}`, name: "store_place", args: { item: items[n] } }] };
    });
  const run = async (items: string[], compensate = "") => {
    made.length = 0;
    const h = harness(
      { "w.worker": workerFile(`name: w\nmodel: test:m\ntoolsets:\n  store: { use: shop${compensate} }`) },
      { kinds: [shop], models: { "test:m": placing(items) } },
    );
    return h.run({ worker: "w", input: { input: "x" } }, new MemoryJournalStore());
  };

  it("undoes each effect newest first without compensate: in the worker file; one that needs none is left", async () => {
    expect(await run(["a", "gift", "b"])).toMatchObject({ status: "failed", error: { message: expect.stringMatching(/provider down$/) } });
    expect(made).toEqual(["place a", "place gift", "place b", "cancel order-b", "cancel order-a"]);
  });

  it("an undo naming no tool of the kind, or one that throws, is not made, and the run says how many stayed made", async () => {
    const outcome = await run(["a", "odd", "boom"]);
    expect(outcome).toMatchObject({ status: "failed", error: { message: expect.stringContaining("2 of its effects could not be undone") } });
    expect(made).toEqual(["place a", "place odd", "place boom", "cancel order-a"]);
  });

  it("a worker file's compensate: for the tool wins over the code's undo", async () => {
    await run(["a"], ', compensate: { place: { tool: cancel, args: { id: "${args.item}" } } }');
    expect(made).toEqual(["place a", "cancel a"]);
  });
});

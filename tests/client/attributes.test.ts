import { describe, expect, it, vi } from "vitest";
import { BadRequestError } from "../../src/client";
import { appClient } from "./app-client";

const client = appClient();

describe("edgework/client: attributes", () => {
  it("start takes attributes; get shows them; list and page filter by them (attr.<name> on the wire)", async () => {
    const seen: Request[] = [];
    const watching = appClient({ seen });
    const a = await client.runs.start({ worker: "fn-shout", input: { kind: "a" }, attributes: { repo: "acme/cli", issue: 7 } });
    await client.runs.start({ worker: "fn-shout", input: { kind: "b" }, attributes: { repo: "acme/other" } });
    expect((await client.runs.get(a.id)).attributes).toEqual({ issue: "7", repo: "acme/cli" });
    await vi.waitFor(async () => expect((await watching.runs.page({ attributes: { repo: "acme/cli" } })).runs.map((r) => r.id)).toEqual([a.id]));
    expect(new URL(seen.at(-1)!.url).searchParams.get("attr.repo")).toBe("acme/cli");
    const pages = [];
    for await (const page of client.runs.list({ attributes: { repo: "acme/cli", issue: "7" }, limit: 1 })) pages.push(...page.runs);
    expect(pages).toEqual([expect.objectContaining({ id: a.id, attributes: { issue: "7", repo: "acme/cli" } })]);
    const bad = await client.runs.page({ attributes: { "Not A Name": "x" } }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
  });
});

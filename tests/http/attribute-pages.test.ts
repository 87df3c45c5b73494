import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";

const bearer = { Authorization: "Bearer test-token" };
const call = (path: string) => exports.default.fetch(new Request(`https://edgework.test${path}`, { headers: bearer }));

async function started(attributes: Record<string, string>): Promise<string> {
  const res = await exports.default.fetch(
    new Request("https://edgework.test/runs", {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ worker: "fn-shout", input: { kind: "x" }, attributes }),
    }),
  );
  return ((await res.json()) as { id: string }).id;
}

describe("attributes on the pages", () => {
  it("the run page shows them escaped, each a link to the inbox filtered by it", async () => {
    const id = await started({ repo: "acme/<b>web</b>", note: '"><script>alert(1)</script>' });
    const html = await (await call(`/runs/${id}/view`)).text();
    expect(html).toContain("note=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain(`href="/inbox?attr.repo=acme%2F%3Cb%3Eweb%3C%2Fb%3E"`);
  });

  it("the inbox lists runs by attr.<name> and by its form's name=value field; a bad one is a 400 page naming it", async () => {
    const a = await started({ team: "inbox-a" });
    const b = await started({ team: "inbox-b" });
    await vi.waitFor(async () => {
      const html = await (await call("/inbox?attr.team=inbox-a")).text();
      expect(html).toContain(a.slice(0, 8));
      expect(html).not.toContain(b.slice(0, 8));
    });
    const form = await (await call(`/inbox?attribute=${encodeURIComponent("team=inbox-b")}&status=`)).text();
    expect(form).toContain(b.slice(0, 8));
    expect(form).not.toContain(a.slice(0, 8));
    expect(form).toContain('value="team=inbox-b"');
    const bad = await call(`/inbox?attribute=${encodeURIComponent("Team=x")}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("attr.Team");
  });
});

import { describe, expect, it } from "vitest";
import { http } from "../../src/engine/toolsets/kinds/http";
import { unfoldJson } from "../../src/engine/toolsets/unfold-json";

const fetchDef = http.definitions.find((d) => d.name === "fetch")!;

describe("describeCall: the http kind", () => {
  it("reads a POST as method, host and path, with the body pretty-printed and JSON inside strings unfolded", () => {
    const d = fetchDef.describe!({
      url: "https://api.github.com/repos/o/r/issues/42/comments?x=1",
      method: "POST",
      body: JSON.stringify({ body: "Thanks!", meta: JSON.stringify({ labels: ["bug"] }) }),
    });
    expect(d?.summary).toBe("POST api.github.com/repos/o/r/issues/42/comments?x=1");
    expect(d?.details).toBe(JSON.stringify({ body: "Thanks!", meta: { labels: ["bug"] } }, null, 2));
  });

  it("names a method override, shows headers, leaves non-JSON text alone, and describes nothing for invalid arguments", () => {
    const d = fetchDef.describe!({ url: "http://127.0.0.1:8080/x", headers: { "X-HTTP-Method-Override": "DELETE" }, body: "<b>hi</b>" });
    expect(d?.summary).toBe("DELETE (sent as GET with a method-override header) 127.0.0.1:8080/x");
    expect(d?.details).toBe("X-HTTP-Method-Override: DELETE\n\n<b>hi</b>");
    expect(fetchDef.describe!({ url: "not a url" })).toBeUndefined();
  });

  it("unfolds JSON in strings at most four levels deep, leaving deeper ones as text", () => {
    let v: unknown = { end: true };
    for (let i = 0; i < 10; i++) v = { a: JSON.stringify(v) };
    let u = unfoldJson(v) as { a: unknown };
    let objects = 0;
    while (typeof u.a === "object") (u = u.a as { a: unknown }), objects++;
    expect(objects).toBe(4);
    expect(typeof u.a).toBe("string");
  });
});

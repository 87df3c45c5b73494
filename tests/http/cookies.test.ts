import { Hono } from "hono/tiny";
import { describe, expect, it } from "vitest";
import { readCookie, setPageCookie } from "../../src/http/cookies";

describe("page cookies", () => {
  it("reads the cookie of that exact name, the first of it, quoted or not; nothing for a prefix, a suffix or a bare name", () => {
    const h = 'a=1; __Host-edgework_session=tok.en; edgework_session=other; q="quoted"; bare; __Host-edgework_session=second';
    expect(readCookie(h, "__Host-edgework_session")).toBe("tok.en");
    expect(readCookie(h, "edgework_session")).toBe("other");
    expect(readCookie(h, "q")).toBe("quoted");
    expect(readCookie(h, "bare")).toBeUndefined();
    expect(readCookie(h, "edgework")).toBeUndefined();
    expect(readCookie(undefined, "a")).toBeUndefined();
    expect(readCookie(`${"x=1; ".repeat(10_000)}a=2`, "a")).toBe("2");
  });

  it("sets HttpOnly, SameSite=Strict, its path and Secure as the cookie says; max-age 0 deletes; a value with a separator is refused", async () => {
    const app = new Hono();
    app.get("/", (c) => {
      setPageCookie(c, { name: "__Secure-s", secure: true, path: "/agents" }, "abc-_.~9", 60);
      setPageCookie(c, { name: "n", secure: false, path: "/" }, "", 0);
      return c.text("ok");
    });
    app.get("/bad", (c) => {
      setPageCookie(c, { name: "n", secure: true, path: "/" }, "a; Domain=evil.example", 60);
      return c.text("never");
    });
    const res = await app.request("/");
    expect(res.headers.getSetCookie()).toEqual([
      "__Secure-s=abc-_.~9; Max-Age=60; Path=/agents; HttpOnly; Secure; SameSite=Strict",
      "n=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict",
    ]);
    expect((await app.request("/bad")).status).toBe(500);
  });
});

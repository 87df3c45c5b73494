import { vi } from "vitest";

/**
 * A shop on shop.example for the compensation tests: orders are placed by POST (answered with the
 * order's `href`) and cancelled by DELETE. The Durable Object runs in this isolate, so its http tool
 * reaches this fake through the spied `fetch`; `vi.restoreAllMocks()` takes it away.
 */
export interface FakeShop {
  /** Every request it saw, as "METHOD /path", in order. */
  readonly seen: string[];
  /** Holds the POST to `path` in flight: `reached` once it arrived, answered once `release` is called. */
  hold(path: string): { reached: Promise<void>; release(): void };
}

export function fakeShop(): FakeShop {
  const seen: string[] = [];
  const held = new Map<string, { arrived(): void; answer: Promise<void> }>();
  const upstream = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.host !== "shop.example") return upstream(input, init);
    const method = init?.method ?? "GET";
    seen.push(`${method} ${url.pathname}`);
    if (method !== "POST") return Response.json({ cancelled: url.pathname });
    const hold = held.get(url.pathname);
    if (hold) {
      hold.arrived();
      await hold.answer;
    }
    const id = url.pathname.split("/").at(-1);
    return Response.json({ id, href: `https://shop.example/orders/${id}` }, { status: 201 });
  });
  return {
    seen,
    hold(path) {
      let arrived!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((r) => (arrived = r));
      held.set(path, { arrived, answer: new Promise<void>((r) => (release = r)) });
      return { reached, release };
    },
  };
}

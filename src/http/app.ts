import { Hono } from "hono";
import { catalog } from "../catalog";
import { CatalogError } from "../engine";
import { workerToolDef } from "../engine/catalog";

export const app = new Hono<{ Bindings: Env }>();

app.get("/", (c) => c.json({ name: "edgework", workers: `${new URL(c.req.url).origin}/workers` }));

/** The catalog, with each worker's tool schema (what a calling model sees). */
app.get("/workers", (c) =>
  c.json({
    workers: [...catalog().workers.values()].map((w) => {
      const { name, description, parameters } = workerToolDef(w);
      return { name, description, parameters, file: w.file, model: w.model ?? null, calls_workers: w.workerTools };
    }),
  }),
);

app.onError((err, c) => {
  if (err instanceof CatalogError) return c.json({ error: "worker catalog refused", problems: err.problems.map((p) => p.message) }, 500);
  console.error(err);
  return c.json({ error: "internal error" }, 500);
});

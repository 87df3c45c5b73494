import { Hono } from "hono/tiny";
import type * as z from "zod";
import type { workerList } from "../../api/workers";
import { catalog } from "../../catalog";
import { workerToolDef } from "../../engine/catalog/catalog";

/**
 * The catalog, with each worker's tool definition exactly as a calling model sees it
 * (its `attachments` parameter included) and its attachment policy, null when it takes none.
 */
export const workers = new Hono<{ Bindings: Env }>();

workers.get("/", (c) =>
  c.json({
    workers: [...catalog().workers.values()].map((w) => {
      const { name, description, parameters } = workerToolDef(w);
      return { name, description, parameters, attachments: w.attachments ?? null, file: w.file, model: w.model ?? null, calls_workers: w.workerTools };
    }),
  } satisfies z.input<typeof workerList>),
);

import * as z from "zod";

/** `GET /workers`: the catalog, each worker with its tool definition as a calling model sees it. */
export const workerList = z.object({
  workers: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      /** JSON Schema of the worker's input (its tool parameters, `attachments` included when it takes files). */
      parameters: z.record(z.string(), z.unknown()),
      /** The files it accepts with each call; null when it takes none. */
      attachments: z.object({ max_files: z.number(), max_bytes: z.number(), types: z.array(z.string()) }).nullable(),
      file: z.string(),
      model: z.string().nullable(),
      calls_workers: z.array(z.string()),
    }),
  ),
});

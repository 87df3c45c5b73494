import { files, http, mcp, toolsetRegistry, workerCreation, type ToolsetKind } from "../engine";
import { counter } from "./counter";

/** The toolset kinds every app has; createApp adds the app's own (its `toolsets`). */
export const builtinKinds: readonly ToolsetKind[] = [files, http, mcp, workerCreation];

/**
 * This repository's app: the built-in kinds and its own, `counter` (src/index.ts passes it to
 * createApp). The catalog check of `edgework build` and the editor schema know these.
 */
export const kinds = toolsetRegistry(...builtinKinds, counter);

import type { ToolsetKind, ToolsetRegistry } from "../types/kind";
import { toolsetRegistry } from "./define";
import { files } from "./kinds/files";
import { http } from "./kinds/http";
import { human } from "./kinds/human";
import { mcp } from "./kinds/mcp";
import { wait } from "./kinds/wait";
import { workerCreation } from "./kinds/worker-creation";

/** The toolset kinds every app has. */
export const builtinKinds: readonly ToolsetKind[] = [files, http, human, mcp, wait, workerCreation];

/**
 * The kinds an app knows: the built-in ones and its own (`toolsets` of createApp, and of the
 * project's src/toolsets/index.ts for `edgework build`), each listed under its own kind name.
 */
export function appKinds(own: Record<string, ToolsetKind> = {}): ToolsetRegistry {
  for (const [name, kind] of Object.entries(own)) {
    if (kind.kind !== name) throw new Error(`createApp: toolsets.${name} is the kind "${kind.kind}"; list it under its own name`);
    if (builtinKinds.some((b) => b.kind === name)) throw new Error(`createApp: toolsets.${name}: "${name}" is a built-in kind`);
  }
  return toolsetRegistry(...builtinKinds, ...Object.values(own));
}

import { files, http, human, mcp, toolsetRegistry, workerCreation } from "../engine";
import { counter } from "./counter";

/**
 * The toolset kinds this app knows. To add your own kind, define it with
 * `defineToolset` (see docs/guide.md, "Write a toolset kind") and list it here.
 */
export const kinds = toolsetRegistry(files, http, human, mcp, workerCreation, counter);

import type { CodeFunction } from "../engine";

/**
 * Code functions: TypeScript in the catalog beside the `.worker` files, in the same
 * namespace (see docs/guide.md, "Code functions"). Add each `defineFunction(...)` here; the
 * catalog checks them with the workers when it loads, and the build bundles them.
 */
export const functions: readonly CodeFunction[] = [];

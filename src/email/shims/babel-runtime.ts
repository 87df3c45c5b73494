/**
 * Stand-ins for the two Babel runtime helpers mimetext's browser build imports
 * (wrangler.toml `[alias]`). The originals pull in core-js polyfills (~40 KiB)
 * for `String.prototype.trim` and `Object.defineProperty`, which workerd has
 * natively; these are the same helpers over the native built-ins.
 */

/** `@babel/runtime-corejs3/core-js/instance/trim`: the instance's own `trim`, called with `.call(it)`. */
export function trimInstanceProperty(it: string): () => string {
  return it.trim;
}

/** `@babel/runtime-corejs3/helpers/esm/defineProperty`: a class field initializer. */
export function defineProperty<T extends object>(obj: T, key: PropertyKey, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
  return obj;
}

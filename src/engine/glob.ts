/**
 * Minimal globs: `*` matches any run of characters except `/` (anything at all
 * when `slashes` is false), `**` any run including `/`, `?` one character.
 */
export function globToRegExp(glob: string, opts: { ignoreCase?: boolean; slashes?: boolean } = {}): RegExp {
  const one = opts.slashes ? "[^/]" : ".";
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        re += ".*";
        i++;
        if (glob[i + 1] === "/") i++, (re += "(?:/)?");
      } else re += `${one}*`;
    } else if (c === "?") re += one;
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, opts.ignoreCase ? "i" : "");
}

export const isGlob = (s: string) => /[*?]/.test(s);

/**
 * Stands in for postal-mime's table of every named HTML entity (2,200 of them, 46 KiB of the
 * bundle) through wrangler.toml's [alias] (the key is the specifier postal-mime's
 * text-format.js imports it by). postal-mime reads it only when it turns an html-only mail
 * into text (a reply to an approval or a question without a plain part; inbound trigger mail
 * goes through src/email/html-text.ts). The entities mail commonly carries are here, numeric
 * ones (`&#233;`, `&#xE9;`) postal-mime decodes itself; any other stays as written.
 */
export const htmlEntities: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&apos;": "'",
  "&nbsp;": "\u00a0",
  "&copy;": "\u00a9",
  "&reg;": "\u00ae",
  "&trade;": "\u2122",
  "&hellip;": "\u2026",
  "&mdash;": "\u2014",
  "&ndash;": "\u2013",
  "&lsquo;": "\u2018",
  "&rsquo;": "\u2019",
  "&ldquo;": "\u201c",
  "&rdquo;": "\u201d",
  "&bull;": "\u2022",
  "&euro;": "\u20ac",
  "&amp": "&",
  "&lt": "<",
  "&gt": ">",
  "&quot": '"',
  "&nbsp": "\u00a0",
};

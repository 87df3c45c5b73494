const encoder = new TextEncoder();

/**
 * Compares two secrets in constant time. Both sides are hashed first so neither
 * the length nor a common prefix of the expected secret leaks through timing.
 */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([given, expected].map((s) => crypto.subtle.digest("SHA-256", encoder.encode(s))));
  return crypto.subtle.timingSafeEqual(a!, b!);
}

// Bindings only the test pool adds (vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    MODEL_SERVER_URL: string;
    API_TOKEN: string;
  }
}

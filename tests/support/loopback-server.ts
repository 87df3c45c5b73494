import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts `server` on a free port of 127.0.0.1: its port, and a close that ends open connections first. */
export async function listenOnLoopback(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Vitest global set-up: a trap proxy on 127.0.0.1 that every CLI started by the tests is pointed at
 * (HTTPS_PROXY / HTTP_PROXY, with loopback in NO_PROXY; the CLI honours both and our scrub keeps them).
 * A connection to any host that is not loopback reaches the trap instead, is refused, and is recorded;
 * the run fails at teardown if anything but the guard's own self-test host was tried.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { TestProject } from "vitest/node";

/** The one host the self-test (test/e2e/loopback-guard.test.ts) tries on purpose. */
export const SELF_TEST_HOST = "loopback-guard-selftest.invalid";

declare module "vitest" {
  export interface ProvidedContext {
    trapProxyUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const attempts: string[] = [];
  const record = (request: IncomingMessage) => attempts.push(`${request.method} ${request.url}`);
  const trap = createServer((request, response) => {
    // The self-test asks the trap what it saw; every other plain request is a proxied attempt.
    if (request.url === "/__attempts") return void response.end(JSON.stringify(attempts));
    record(request);
    response.writeHead(403).end("blocked by the test suite's loopback guard\n");
  });
  trap.on("connect", (request, socket) => {
    socket.on("error", () => {});
    record(request);
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  });
  await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
  const { port } = trap.address() as { port: number };
  project.provide("trapProxyUrl", `http://127.0.0.1:${port}`);
  return () => {
    trap.close();
    const escaped = attempts.filter((attempt) => !attempt.includes(SELF_TEST_HOST));
    if (escaped.length === 0) return;
    // An error thrown here is only printed by Vitest; the exit code is what fails CI.
    process.stderr.write(`\nLOOPBACK GUARD: tests tried to reach hosts other than loopback: ${escaped.join(", ")}\n`);
    process.exitCode = 1;
  };
}

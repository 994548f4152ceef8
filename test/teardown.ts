/**
 * A setup file of the end-to-end projects (vitest.config.ts): once a test has failed, its own `afterEach`
 * hooks included (one that throws skips the rest, the file's cleanup among them), the runtimes it made are
 * closed and its leftover processes killed. The failure stays the failing test's; this keeps it from
 * spreading to the tests after it, whose leak checks would otherwise see its CLIs (files share a worker).
 * A passing test is left as it is: files keep resources across tests (beforeAll).
 */
import { beforeEach, onTestFinished } from "vitest";
import { beginTest, teardownFailedTest } from "./support.js";

beforeEach(() => {
  beginTest();
  onTestFinished(async ({ task }) => {
    if (task.result?.state !== "fail") return;
    const killed = await teardownFailedTest();
    if (killed.length > 0) process.stderr.write(`test teardown: after the failed test, killed ${killed.length} leftover process(es): ${killed.join(", ")}\n`);
  });
});

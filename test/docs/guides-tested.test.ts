/**
 * Every guide opens with an example a docs test runs (issue 44): each page under docs/guides/ is read by a
 * test in test/docs/ (those tests run the page's code, or, for testing.md, are the page's example line for line),
 * and its first fenced block comes before its second section. A new guide without such a test fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const dir = join(import.meta.dirname, "../../docs/guides");
const tests = readdirSync(import.meta.dirname)
  .filter((name) => /\.(test\.)?ts$/.test(name) && name !== "guides-tested.test.ts")
  .map((name) => readFileSync(join(import.meta.dirname, name), "utf8"));

it.each(readdirSync(dir).filter((name) => name.endsWith(".md")))("%s: run by a docs test, example early", (name) => {
  const runners = tests.filter((text) => text.includes(`guides/${name}`) || text.includes(`"${name}"`));
  expect(runners.length, `${name}: no test in test/docs runs its example`).toBeGreaterThan(0);
  const page = readFileSync(join(dir, name), "utf8");
  const firstBlock = page.indexOf("```");
  const secondSection = page.indexOf("\n## ", page.indexOf("\n## ") + 1);
  expect(firstBlock, `${name}: a fenced example`).toBeGreaterThan(0);
  expect(secondSection === -1 || firstBlock < secondSection, `${name}: the example comes before the second section`).toBe(true);
});

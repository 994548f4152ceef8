/**
 * No doc tells a user to run this package's name fetched from the registry on the fly: `npx ktx-claude-code`
 * without a local bin runs whatever the registry holds under that name, not the version the project installed.
 * Installing it into the project (`pnpm add ktx-claude-code`, `npm install ktx-claude-code`) is the documented
 * install of a published release (README, "Installing it"). The advice the code prints says `npx --no-install` too.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { LOGIN_COMMAND } from "../../src/errors/index.js";

const root = join(import.meta.dirname, "../..");
// docs/ and its folders (the guides live in docs/guides/).
const docs = ["README.md", ...readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

// npx/pnpm dlx/yarn dlx/bunx of the name (an install into the project is fine).
const registryFetch = /\b(?:npx(?:\s+(?:-y|--yes))?|pnpm\s+dlx|yarn\s+dlx|bunx|npm\s+exec(?:\s+--)?)\s+ktx-claude-code\b/gm;

it("no doc runs a registry fetch of ktx-claude-code; npx is always --no-install", () => {
  expect(docs).toContain("docs/guides/ktx-backend.md");
  const found: string[] = [];
  for (const doc of docs) {
    const text = readFileSync(join(root, doc), "utf8");
    for (const match of text.matchAll(registryFetch)) found.push(`${doc}: ${match[0]}`);
  }
  expect(found).toEqual([]);
  const readme = readFileSync(join(root, "README.md"), "utf8");
  expect(readme).toContain("npx --no-install ktx-claude-code login");
  expect(readme).toContain("npm install /path/to/ktx-claude-code-0.1.0.tgz");
  expect(readme).toContain("pnpm add ktx-claude-code zod");
  expect(LOGIN_COMMAND).toBe("npx --no-install ktx-claude-code login");
});

it("the pattern catches the forms it is meant to", () => {
  for (const bad of ["npx ktx-claude-code login", "npx -y ktx-claude-code doctor", "pnpm dlx ktx-claude-code status", "npm exec ktx-claude-code"]) {
    expect(bad.match(registryFetch), bad).not.toBeNull();
  }
  for (const good of ["npx --no-install ktx-claude-code login", "npm install /path/to/ktx-claude-code-0.1.0.tgz", "pnpm add ./ktx-claude-code-0.1.0.tgz", "pnpm add ktx-claude-code", "npm install ktx-claude-code", "./node_modules/.bin/ktx-claude-code doctor"]) {
    expect(good.match(registryFetch), good).toBeNull();
  }
});

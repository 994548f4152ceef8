/**
 * No doc tells a user to fetch this package's name from the registry: it is not published, and a registry
 * fetch of the name (`npx ktx-claude-code` without a local bin, `npm install ktx-claude-code`) would run
 * whatever is published under it later. The advice the code prints says `npx --no-install` too.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { LOGIN_COMMAND } from "../../src/errors/index.js";

const root = join(import.meta.dirname, "../..");
const docs = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

// npx/pnpm dlx/yarn dlx/bunx of the name, or an install of the bare name (a path or tarball is fine).
const registryFetch = /\b(?:npx(?:\s+(?:-y|--yes))?|pnpm\s+dlx|yarn\s+dlx|bunx|npm\s+exec(?:\s+--)?)\s+ktx-claude-code\b|\b(?:npm\s+(?:install|i|add)|pnpm\s+add|yarn\s+add)\s+(?:-\S+\s+)*ktx-claude-code(?:@\S*)?(?=[\s`]|$)/gm;

it("no doc runs a registry fetch of ktx-claude-code; npx is always --no-install", () => {
  const found: string[] = [];
  for (const doc of docs) {
    const text = readFileSync(join(root, doc), "utf8");
    for (const match of text.matchAll(registryFetch)) found.push(`${doc}: ${match[0]}`);
  }
  expect(found).toEqual([]);
  const readme = readFileSync(join(root, "README.md"), "utf8");
  expect(readme).toContain("npx --no-install ktx-claude-code login");
  expect(readme).toContain("npm install /path/to/ktx-claude-code-0.1.0.tgz");
  expect(LOGIN_COMMAND).toBe("npx --no-install ktx-claude-code login");
});

it("the pattern catches the forms it is meant to", () => {
  for (const bad of ["npx ktx-claude-code login", "npx -y ktx-claude-code doctor", "npm install ktx-claude-code", "npm i ktx-claude-code@0.1.0", "pnpm add ktx-claude-code", "pnpm dlx ktx-claude-code status"]) {
    expect(bad.match(registryFetch), bad).not.toBeNull();
  }
  for (const good of ["npx --no-install ktx-claude-code login", "npm install /path/to/ktx-claude-code-0.1.0.tgz", "pnpm add ./ktx-claude-code-0.1.0.tgz", "./node_modules/.bin/ktx-claude-code doctor"]) {
    expect(good.match(registryFetch), good).toBeNull();
  }
});

/**
 * Every relative link in README.md, CHANGELOG.md and docs/ leads somewhere: the file exists and, when the
 * link names a heading (`page.md#anchor`), the page has that heading (GitHub's slug rules). Pages move as the
 * docs are reorganised; a link left pointing at the old place fails here rather than in a reader's browser.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

function pages(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? pages(path) : path.endsWith(".md") ? [path] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(path: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

function links(path: string): string[] {
  const text = readFileSync(path, "utf8").replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((link) => !/^[a-z]+:/i.test(link));
}

describe("links between the docs", () => {
  const files = [join(root, "README.md"), join(root, "CHANGELOG.md"), ...pages(join(root, "docs"))];
  it("every relative link resolves to a file, and every anchor to a heading of it", () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const link of links(file)) {
        const [target, anchor] = link.split("#") as [string, string | undefined];
        const path = target === "" ? file : resolve(dirname(file), target);
        const where = `${relative(root, file)} → ${link}`;
        if (!existsSync(path)) broken.push(`${where} (no such file)`);
        else if (anchor && path.endsWith(".md") && !anchors(path).has(anchor)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

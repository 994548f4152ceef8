/**
 * The docs the code points users to exist: every `docs/<page>.md` that a source file names (error messages
 * and advice among them) is a page, and a heading it cites — `docs/page.md, "Heading"`, `docs/page.md
 * ("Heading")` or `docs/page.md#anchor` — is one of that page's headings. A page renamed or a heading
 * reworded in the docs fails here, not in front of a user following an error's advice.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** A page's headings, as text and as GitHub anchors. */
function headings(page: string): { texts: string[]; anchors: Set<string> } {
  const texts = readFileSync(page, "utf8")
    .replace(/```[\s\S]*?```/g, "")
    .split("\n")
    .flatMap((line) => /^#{1,6}\s+(.*)$/.exec(line)?.[1] ?? []);
  const slug = (text: string) => text.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
  return { texts, anchors: new Set(texts.map(slug)) };
}

it("every docs page and heading the source cites exists", () => {
  const broken: string[] = [];
  for (const file of sources(join(root, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/docs\/([\w/-]+\.md)(?:#([\w-]+))?(?:,? \(?\\?"([^"\\]+)\\?"\)?)?/g)) {
      const [cited, page, anchor, quoted] = match as unknown as [string, string, string | undefined, string | undefined];
      // A heading cited across comment lines ("The\n * wire check") is read as one line.
      const heading = quoted?.replace(/\s*\n\s*\*?\s*/g, " ");
      const where = `${file.slice(root.length + 1)}: ${cited}`;
      const path = join(root, "docs", page);
      if (!existsSync(path)) {
        broken.push(`${where} (no such page)`);
        continue;
      }
      const found = headings(path);
      if (anchor && !found.anchors.has(anchor)) broken.push(`${where} (no heading with that anchor)`);
      // A cited heading may be a heading's start ("The wire check" for "3. The wire check: every request …").
      if (heading && !found.texts.some((text) => text.replace(/`/g, "").toLowerCase().includes(heading.toLowerCase()))) broken.push(`${where} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});

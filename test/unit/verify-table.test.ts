/**
 * What `fixtures verify` writes: a table entry into src/binary/versions.ts (newest first, or replacing
 * the version's own) that compiles to the probed facts, and the dependency's `||` union.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliVersionFacts, VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { dependencyRange, renderEntry, upsertEntry, withDependencyRange } from "../../src/cli/verify-table.js";
import { cleanup, tempDir } from "../support.js";

afterEach(cleanup);

const ROOT = join(import.meta.dirname, "../..");
const SOURCE = readFileSync(join(ROOT, "src/binary/versions.ts"), "utf8");

/** The table a versions.ts text defines (the file imports nothing, so it loads from anywhere). */
async function tableOf(source: string): Promise<Record<string, CliVersionFacts>> {
  const file = join(tempDir("versions"), "versions.ts");
  writeFileSync(file, source);
  return (await import(file)).VERIFIED_CLI_VERSIONS;
}

const newest = Object.keys(VERIFIED_CLI_VERSIONS).sort((a, b) => b.localeCompare(a, undefined, { numeric: true }))[0]!;
const probed: CliVersionFacts = {
  ...VERIFIED_CLI_VERSIONS[newest]!,
  version: "9.0.1",
  builtinPlugins: ["cc-plugin-new"],
  aliases: { sonnet: "claude-sonnet-9", opus: "claude-opus-9", haiku: "claude-haiku-9" },
  binarySha256: { "linux-x64": "a".repeat(64), "darwin-arm64": "b".repeat(64) },
};

describe("the table entry fixtures verify writes", () => {
  it("adds a new version first, as probed, and leaves every other entry as it was", async () => {
    const written = upsertEntry(SOURCE, probed);
    const table = await tableOf(written);
    expect(Object.keys(table)[0]).toBe("9.0.1");
    expect(table["9.0.1"]).toEqual(probed);
    for (const [version, facts] of Object.entries(VERIFIED_CLI_VERSIONS)) expect(table[version]).toEqual(facts);
    // Only lines were added: the diff a maintainer reviews is the entry alone.
    expect(renderEntry(probed)).toContain('builtinTools: [...BUILTIN_TOOLS, "');
    expect(written.replace(renderEntry(probed), "")).toBe(SOURCE);
  });

  it("puts an older version between the newer and older ones, and replaces a version's own entry", async () => {
    const middle = { ...probed, version: "2.1.250" };
    const table = await tableOf(upsertEntry(SOURCE, middle));
    const order = Object.keys(table);
    expect(order.indexOf("2.1.250")).toBe(order.indexOf("2.1.286") + 1);
    const replaced = upsertEntry(upsertEntry(SOURCE, probed), { ...probed, modelSwitch: undefined, duplicateMcpInitialize: true });
    const again = await tableOf(replaced);
    expect(Object.keys(again).filter((version) => version === "9.0.1")).toHaveLength(1);
    expect(again["9.0.1"]).toMatchObject({ duplicateMcpInitialize: true });
    expect(again["9.0.1"]!.modelSwitch).toBeUndefined();
  });

  it("rewrites the pinned entry from its own facts without changing what it means", async () => {
    const pinned = Object.values(VERIFIED_CLI_VERSIONS).find((facts) => facts.binarySha256)!;
    expect((await tableOf(upsertEntry(SOURCE, pinned)))[pinned.version]).toEqual(pinned);
  });

  it("rewrites every entry, the ones without reuse or a one-request object included, without changing what it means", async () => {
    for (const facts of Object.values(VERIFIED_CLI_VERSIONS)) expect((await tableOf(upsertEntry(SOURCE, facts)))[facts.version]).toEqual(facts);
  });
});

describe("the dependency range", () => {
  it("is the || union of the verified versions, oldest first, each once", () => {
    expect(dependencyRange(["2.1.330", "2.1.142", "2.1.332", "2.1.200", "2.1.286", "2.1.330", "2.1.331"])).toBe("2.1.142 || 2.1.200 || 2.1.286 || 2.1.330 || 2.1.331 || 2.1.332");
    const packageJson = readFileSync(join(ROOT, "package.json"), "utf8");
    const written = withDependencyRange(packageJson, ["2.1.142", "9.0.1"]);
    const platforms = Object.keys(JSON.parse(packageJson).optionalDependencies as Record<string, string>);
    expect(platforms).toHaveLength(8);
    for (const name of platforms) expect(JSON.parse(written).optionalDependencies[name]).toBe("2.1.142 || 9.0.1");
    // Only those lines change.
    expect(written.split("\n").filter((line, index) => line !== packageJson.split("\n")[index])).toEqual(platforms.map((name, index) => `    "${name}": "2.1.142 || 9.0.1"${index < platforms.length - 1 ? "," : ""}`));
  });
});

/** The declared CLI dependency and the verified-version table name the same versions; which one runs is the installed one. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledCliVersion } from "../../src/binary/locate.js";
import { NEWEST_VERIFIED_CLI_VERSION, PINNED_CLI_VERSION, VERIFIED_CLI_VERSIONS, compareCliVersions, factsFor, isVerifiedVersion } from "../../src/binary/versions.js";

const root = join(import.meta.dirname, "../..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
const CLI = "@anthropic-ai/claude-code";

describe("the CLI dependency", () => {
  it("is a || union of exact versions naming exactly the verified-version table's versions", () => {
    const declared = manifest.dependencies?.[CLI] ?? manifest.peerDependencies?.[CLI];
    expect(declared, `package.json declares ${CLI}`).toBeDefined();
    const versions = declared!.split("||").map((part) => part.trim());
    // Exact versions only: a caret, tilde or range would let an unverified version satisfy it.
    for (const version of versions) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect([...versions].sort(compareCliVersions)).toEqual(Object.keys(VERIFIED_CLI_VERSIONS).sort(compareCliVersions));
  });

  it("is installed by the repo's lockfile at one verified version, the one bundledCliVersion reads", () => {
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
    const locked = lock.packages[`node_modules/${CLI}`]?.version;
    expect(locked).toBeDefined();
    expect(isVerifiedVersion(locked!)).toBe(true);
    expect(bundledCliVersion()).toBe(locked);
    expect(bundledCliVersion(() => undefined)).toBeUndefined();
  });

  it("NEWEST_VERIFIED_CLI_VERSION is the numerically newest table entry; PINNED_CLI_VERSION is kept as its alias", () => {
    const newest = Object.keys(VERIFIED_CLI_VERSIONS).reduce((a, b) => (compareCliVersions(a, b) >= 0 ? a : b));
    expect(NEWEST_VERIFIED_CLI_VERSION).toBe(newest);
    expect(PINNED_CLI_VERSION).toBe(NEWEST_VERIFIED_CLI_VERSION);
    expect(compareCliVersions("2.1.99", "2.1.100")).toBeLessThan(0);
    expect(compareCliVersions("2.10.0", "2.9.9")).toBeGreaterThan(0);
  });

  it("an unverified version borrows the newest verified version's facts under its own version", () => {
    expect(factsFor("9.9.9")).toEqual({ ...VERIFIED_CLI_VERSIONS[NEWEST_VERIFIED_CLI_VERSION], version: "9.9.9" });
    for (const version of Object.keys(VERIFIED_CLI_VERSIONS)) expect(factsFor(version)).toBe(VERIFIED_CLI_VERSIONS[version]);
  });
});

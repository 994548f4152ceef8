/** The declared CLI dependency and the verified-version table name the same versions; which one runs is the installed one. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledCliVersion } from "../../src/binary/locate.js";
import { NEWEST_VERIFIED_CLI_VERSION, PINNED_CLI_VERSION, VERIFIED_CLI_VERSIONS, OLDEST_REUSE_CLI_VERSION, compareCliVersions, factsFor, isVerifiedVersion, noReuseWarning } from "../../src/binary/versions.js";

const root = join(import.meta.dirname, "../..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
const CLI = "@anthropic-ai/claude-code";
/** Every platform package the CLI publishes (the wrapper's optionalDependencies). */
const PLATFORMS = ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-arm64-musl", "linux-x64", "linux-x64-musl", "win32-arm64", "win32-x64"].map((platform) => `${CLI}-${platform}`);

describe("the CLI dependency", () => {
  it("is every platform package, optional, each a || union of exact versions naming exactly the verified-version table's versions", () => {
    expect(Object.keys(manifest.optionalDependencies ?? {}).sort()).toEqual(PLATFORMS);
    // Not the wrapper: its engines pick an old CLI on Node 20 and its postinstall fails pnpm 11's strict builds.
    expect(manifest.dependencies?.[CLI]).toBeUndefined();
    expect(manifest.peerDependencies?.[CLI]).toBeUndefined();
    for (const name of PLATFORMS) {
      const versions = manifest.optionalDependencies![name]!.split("||").map((part) => part.trim());
      // Exact versions only: a caret, tilde or range would let an unverified version satisfy it.
      for (const version of versions) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
      expect([...versions].sort(compareCliVersions), name).toEqual(Object.keys(VERIFIED_CLI_VERSIONS).sort(compareCliVersions));
    }
  });

  it("is locked for every platform, at one version, so npm ci works on any of them", () => {
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string; optional?: boolean }> };
    const locked = PLATFORMS.map((name) => lock.packages[`node_modules/${name}`]);
    for (const entry of locked) expect(entry).toMatchObject({ optional: true });
    expect(new Set(locked.map((entry) => entry?.version)).size).toBe(1);
    expect(lock.packages[`node_modules/${CLI}`]).toBeUndefined();
  });

  it("is installed by the repo's lockfile at one verified version, the one bundledCliVersion reads", () => {
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
    const locked = lock.packages[`node_modules/${CLI}-linux-x64`]?.version;
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

  it("names the versions without reuse, and only those get the warning, naming the version and the fix", () => {
    const withoutReuse = Object.values(VERIFIED_CLI_VERSIONS).filter((facts) => facts.reuse === false).map((facts) => facts.version);
    expect(withoutReuse.sort(compareCliVersions)).toEqual(["2.1.142", "2.1.200"]);
    for (const facts of Object.values(VERIFIED_CLI_VERSIONS)) {
      const warning = noReuseWarning(facts);
      if (facts.reuse === false) {
        expect(compareCliVersions(facts.version, OLDEST_REUSE_CLI_VERSION)).toBeLessThan(0);
        expect(warning).toContain(`Claude Code CLI ${facts.version} refuses rewind_conversation`);
        expect(warning).toContain(`from ${OLDEST_REUSE_CLI_VERSION} on`);
        // With reuse off nothing is lost, so nothing is said.
        expect(noReuseWarning(facts, false)).toBeUndefined();
      } else {
        expect(compareCliVersions(facts.version, OLDEST_REUSE_CLI_VERSION)).toBeGreaterThanOrEqual(0);
        expect(warning).toBeUndefined();
      }
    }
    expect(Object.values(VERIFIED_CLI_VERSIONS).filter((facts) => facts.structuredOutputInOneRequest === false).map((facts) => facts.version)).toEqual(["2.1.142"]);
  });

  it("an unverified version borrows the newest verified version's facts under its own version", () => {
    expect(factsFor("9.9.9")).toEqual({ ...VERIFIED_CLI_VERSIONS[NEWEST_VERIFIED_CLI_VERSION], version: "9.9.9" });
    for (const version of Object.keys(VERIFIED_CLI_VERSIONS)) expect(factsFor(version)).toBe(VERIFIED_CLI_VERSIONS[version]);
  });
});

/** Finding the bundled CLI binary: platform package first, the wrapper's bin as the fallback. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { bundledCliVersion, locateBundledCli, packageDirResolver } from "../../src/binary/locate.js";
import { CliNotFoundError } from "../../src/index.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A fake node_modules with the given executables; returns a package-dir resolver over it. */
function fakeModules(executables: string[]): (name: string) => string | undefined {
  const root = mkdtempSync(join(tmpdir(), "ktx-locate-"));
  dirs.push(root);
  for (const relative of executables) {
    const path = join(root, relative);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "#!/bin/sh\n");
    chmodSync(path, 0o755);
  }
  const platform = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  // The platform package is "installed" (its dir resolves) in every case; only its binary varies.
  mkdirSync(join(root, platform), { recursive: true });
  return (name) => (name === platform || name === "@anthropic-ai/claude-code" ? join(root, name) : undefined);
}

describe("locateBundledCli", () => {
  const platformBinary = `@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`;

  it("prefers the platform package's binary", () => {
    const found = locateBundledCli(fakeModules([platformBinary, "@anthropic-ai/claude-code/bin/claude.exe"]));
    expect(found.endsWith(platformBinary)).toBe(true);
  });

  it("falls back to the wrapper's bin entry when the platform binary is missing", () => {
    const found = locateBundledCli(fakeModules(["@anthropic-ai/claude-code/bin/claude.exe"]));
    expect(found.endsWith("@anthropic-ai/claude-code/bin/claude.exe")).toBe(true);
  });

  it("fails with CliNotFoundError naming every place it looked", () => {
    let error: unknown;
    try {
      locateBundledCli(fakeModules([]));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliNotFoundError);
    expect((error as Error).message).toMatch(/no executable binary among .*claude-code-.*\/claude, .*claude-code\/bin\/claude\.exe/);
  });

  it("explains when no platform package is installed, and how to get one", () => {
    expect(() => locateBundledCli(() => undefined)).toThrow(/the CLI's platform package \(@anthropic-ai\/claude-code-.*\) is not installed \(an install with --omit=optional/);
  });
});

describe("the default package resolver", () => {
  it("finds the platform package as this package's own optional dependency, with no wrapper, and reads its version", () => {
    const root = mkdtempSync(join(tmpdir(), "ktx-locate-direct-"));
    dirs.push(root);
    const platformName = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
    const platform = join(root, "node_modules", platformName);
    mkdirSync(platform, { recursive: true });
    writeFileSync(join(platform, "package.json"), JSON.stringify({ name: platformName, version: "2.1.330" }));
    writeFileSync(join(platform, process.platform === "win32" ? "claude.exe" : "claude"), "#!/bin/sh\n");
    chmodSync(join(platform, process.platform === "win32" ? "claude.exe" : "claude"), 0o755);
    const resolve = packageDirResolver(createRequire(join(root, "index.js")));
    expect(resolve("@anthropic-ai/claude-code")).toBeUndefined();
    expect(resolve(platformName)).toBe(platform);
    expect(bundledCliVersion(resolve)).toBe("2.1.330");
    expect(locateBundledCli(resolve)).toBe(join(platform, process.platform === "win32" ? "claude.exe" : "claude"));
  });

  it("finds the platform package through the CLI wrapper when only the wrapper can see it (pnpm without hoisting)", () => {
    const root = mkdtempSync(join(tmpdir(), "ktx-locate-strict-"));
    dirs.push(root);
    const manifest = (dir: string, name: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "2.1.286" }));
    };
    const wrapper = join(root, "node_modules/@anthropic-ai/claude-code");
    const platformName = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
    const platform = join(wrapper, "node_modules", platformName);
    manifest(wrapper, "@anthropic-ai/claude-code");
    manifest(platform, platformName);
    const resolve = packageDirResolver(createRequire(join(root, "index.js")));
    expect(resolve("@anthropic-ai/claude-code")).toBe(wrapper);
    expect(resolve(platformName)).toBe(platform);
    expect(resolve("@anthropic-ai/claude-code-nowhere")).toBeUndefined();
    expect(bundledCliVersion(resolve)).toBe("2.1.286");
  });
});

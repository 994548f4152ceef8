/**
 * Installs of other CLI versions are checked (issue 30): npm runs with an allowlisted environment and
 * --ignore-scripts, the packages must carry the registry's integrity, the binary's sha256 is recorded
 * and a cached binary is checked against the table (or the install's record) before it runs.
 * `fixtures record` refuses an unverified version. A stand-in `npm` on PATH: nothing is downloaded.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { INSTALL_RECORD, ensureCliVersion, npmEnv } from "../../src/binary/install.js";
import { VERIFIED_CLI_VERSIONS } from "../../src/binary/versions.js";
import { CliChecksumError } from "../../src/errors/index.js";
import { cleanup, tempDir } from "../support.js";

const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");
const run = (args: string[], env: Record<string, string>) => execa(process.execPath, [MAIN, ...args], { reject: false, env });

afterEach(cleanup);

const PLATFORM = `${process.platform}-${process.arch}`;

/**
 * A stand-in npm: `install` writes a native "binary" for `version` into the platform package, the
 * lockfile npm writes, and dumps its argv and environment; `view` answers `registryIntegrity`.
 */
function standInNpm(version: string, options: { registryIntegrity?: string } = {}): { path: string; dump: string; ranMarker: string } {
  const bin = tempDir("npm-bin");
  const dump = join(tempDir("npm-dump"), "npm");
  const ranMarker = join(tempDir("ran"), "ran");
  const pkg = `@anthropic-ai/claude-code-${PLATFORM}`;
  const lock = JSON.stringify({
    packages: {
      "node_modules/@anthropic-ai/claude-code": { version, integrity: "sha512-wrapper" },
      [`node_modules/${pkg}`]: { version, integrity: "sha512-platform" },
    },
  });
  writeFileSync(
    join(bin, "npm"),
    [
      "#!/bin/sh",
      `echo "$@" >> "${dump}.argv"`,
      `env >> "${dump}.env"`,
      'if [ "$1" = view ]; then',
      `  case "$2" in @anthropic-ai/claude-code@*) echo ${options.registryIntegrity ?? "sha512-wrapper"};; *) echo sha512-platform;; esac; exit 0`,
      "fi",
      'PREFIX="$3"',
      `mkdir -p "$PREFIX/node_modules/${pkg}"`,
      `echo '${lock}' > "$PREFIX/node_modules/.package-lock.json"`,
      `printf '#!/bin/sh\\necho "${version} (Claude Code)"\\n' > "$PREFIX/node_modules/${pkg}/claude"`,
      `chmod +x "$PREFIX/node_modules/${pkg}/claude"`,
    ].join("\n"),
  );
  chmodSync(join(bin, "npm"), 0o755);
  return { path: bin, dump, ranMarker };
}

describe("checked installs", () => {
  it("npm runs without the caller's credentials, BUN_OPTIONS or registry, with --ignore-scripts; the install records the binary's sha256", async () => {
    const npm = standInNpm("2.1.901");
    const cacheDir = join(tempDir("cache"), "cli");
    const caller = {
      PATH: `${npm.path}:${process.env.PATH}`,
      HOME: tempDir("home"),
      ANTHROPIC_API_KEY: "sk-ant-caller-secret",
      CLAUDE_CODE_OAUTH_TOKEN: "oauth-caller-secret",
      BUN_OPTIONS: "--preload /tmp/evil.js",
      GITHUB_TOKEN: "ghp-caller-secret",
      npm_config_registry: "http://127.0.0.1:9/evil-registry/",
      "npm_config_//registry.npmjs.org/:_authToken": "npm-caller-secret",
      npm_config_cache: "/tmp/npm-cache-of-the-caller",
      HTTPS_PROXY: "http://127.0.0.1:3128",
      NODE_EXTRA_CA_CERTS: "/etc/ssl/corp.pem",
    };
    // What npm is given, as a function of the caller's environment.
    expect(npmEnv({ ...caller, NODE_OPTIONS: "--require /tmp/evil.js", npm_config_key: "client-key", npm_config__auth: "dXNlcjpwYXNz", npm_config_cafile: "/etc/ssl/corp.pem" })).toEqual({
      npm_config_cafile: "/etc/ssl/corp.pem",
      PATH: caller.PATH,
      HOME: caller.HOME,
      npm_config_cache: "/tmp/npm-cache-of-the-caller",
      HTTPS_PROXY: "http://127.0.0.1:3128",
      NODE_EXTRA_CA_CERTS: "/etc/ssl/corp.pem",
    });
    // And what the real command passes to npm (a separate process with that environment).
    const { exitCode, stderr } = await run(["fixtures", "compare", "--version", "2.1.901", "--cache-dir", cacheDir, "--scenarios", "text"], caller);
    expect(stderr).toMatch(/Installed 2\.1\.901/);
    expect(exitCode, stderr).not.toBe(2);
    const env = readFileSync(`${npm.dump}.env`, "utf8");
    for (const secret of ["sk-ant-caller-secret", "oauth-caller-secret", "BUN_OPTIONS", "ghp-caller-secret", "evil-registry", "npm-caller-secret"]) expect(env).not.toContain(secret);
    expect(env).toContain("npm_config_cache=/tmp/npm-cache-of-the-caller");
    expect(env).toContain("HTTPS_PROXY=http://127.0.0.1:3128");
    const argv = readFileSync(`${npm.dump}.argv`, "utf8").trim().split("\n");
    expect(argv[0]).toMatch(/^install --prefix \S+ .*--ignore-scripts .*@anthropic-ai\/claude-code@2\.1\.901$/);
    // Both packages checked against the registry.
    expect(argv.slice(1)).toEqual([`view @anthropic-ai/claude-code@2.1.901 dist.integrity --loglevel=error`, `view @anthropic-ai/claude-code-${PLATFORM}@2.1.901 dist.integrity --loglevel=error`]);
    const record = JSON.parse(readFileSync(join(cacheDir, "2.1.901", INSTALL_RECORD), "utf8"));
    expect(record).toEqual({
      version: "2.1.901",
      key: PLATFORM,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      integrity: { "@anthropic-ai/claude-code": "sha512-wrapper", [`@anthropic-ai/claude-code-${PLATFORM}`]: "sha512-platform" },
    });
  });

  it("an install whose package integrity is not the registry's is refused, and nothing is left behind", async () => {
    const npm = standInNpm("2.1.902", { registryIntegrity: "sha512-what-the-registry-says" });
    const parent = tempDir("cache-parent");
    const { exitCode, stdout, stderr } = await run(["fixtures", "compare", "--version", "2.1.902", "--cache-dir", join(parent, "cli")], { PATH: `${npm.path}:${process.env.PATH}`, HOME: tempDir("home") });
    expect(exitCode).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/fixtures compare could not run: CliInstallError: .*@anthropic-ai\/claude-code@2\.1\.902 was installed with integrity sha512-wrapper, the registry says sha512-what-the-registry-says/);
    expect(readdirSync(parent)).toEqual([]);
  });

  it("a planted binary in the cache dir with the right --version output is refused, naming the checksum, and never runs", async () => {
    const verified = Object.values(VERIFIED_CLI_VERSIONS).find((facts) => facts.binarySha256?.[PLATFORM]);
    if (!verified) throw new Error(`no verified version records a ${PLATFORM} checksum`);
    const cacheDir = join(tempDir("cache"), "cli");
    const dir = join(cacheDir, verified.version, "node_modules", "@anthropic-ai", `claude-code-${PLATFORM}`);
    mkdirSync(dir, { recursive: true });
    const marker = join(tempDir("ran"), "ran");
    writeFileSync(join(dir, "claude"), `#!/bin/sh\ntouch '${marker}'\necho "${verified.version} (Claude Code)"\n`);
    chmodSync(join(dir, "claude"), 0o755);
    const refused = await ensureCliVersion(verified.version, cacheDir, () => {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CliChecksumError);
    expect(refused).toMatchObject({ code: "cli_checksum_mismatch", expectedSha256: verified.binarySha256![PLATFORM], version: verified.version });
    expect((refused as Error).message).toContain(`not ${verified.binarySha256![PLATFORM]} (the verified table's ${verified.version} ${PLATFORM} entry)`);
    expect((refused as CliChecksumError).actualSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(marker)).toBe(false);
  });

  it("a cached unverified version is checked against its install record: a replaced binary is refused, one without a record is installed afresh", async () => {
    const npm = standInNpm("2.1.903");
    const cacheDir = join(tempDir("cache"), "cli");
    const env = { PATH: `${npm.path}:${process.env.PATH}`, HOME: tempDir("home") };
    expect((await run(["fixtures", "compare", "--version", "2.1.903", "--cache-dir", cacheDir, "--scenarios", "text"], env)).stderr).toMatch(/Installed 2\.1\.903/);
    const binary = join(cacheDir, "2.1.903", "node_modules", "@anthropic-ai", `claude-code-${PLATFORM}`, "claude");
    writeFileSync(binary, '#!/bin/sh\necho "2.1.903 (Claude Code)"\n# replaced\n');
    const replaced = await run(["fixtures", "compare", "--version", "2.1.903", "--cache-dir", cacheDir, "--scenarios", "text"], env);
    expect(replaced.exitCode).toBe(2);
    expect(replaced.stderr).toMatch(/could not run: CliChecksumError: The Claude Code 2\.1\.903 binary at .* has sha256 [0-9a-f]{64}, not [0-9a-f]{64} \(the install record .*\.ktx-install\.json\); it is not run/);
    // Without a record (an install from before checked installs) it is installed again, checked.
    writeFileSync(join(cacheDir, "2.1.903", INSTALL_RECORD), "");
    const again = await run(["fixtures", "compare", "--version", "2.1.903", "--cache-dir", cacheDir, "--scenarios", "text"], env);
    expect(again.stderr).toMatch(/Installed 2\.1\.903/);
    expect(readFileSync(binary, "utf8")).not.toContain("# replaced");
  });
});

describe("fixtures record", () => {
  it("refuses a version the table does not hold (exit 2, a typed error), before installing anything", async () => {
    const npm = standInNpm("2.1.904");
    const out = tempDir("fixtures-out");
    const { exitCode, stdout, stderr } = await run(["fixtures", "record", "--versions", "2.1.904", "--out", out], { PATH: `${npm.path}:${process.env.PATH}`, HOME: tempDir("home") });
    expect(exitCode).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trim()).toMatch(/^fixtures record could not run: UnverifiedFixturesError: Not recording fixtures of CLI 2\.1\.904: ktx-claude-code has not verified it \(verified: .*\).* `ktx-claude-code fixtures verify --version 2\.1\.904`.* --verification/);
    expect(readdirSync(out)).toEqual([]);
    expect(existsSync(`${npm.dump}.argv`)).toBe(false);
  });
});

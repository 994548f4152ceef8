/**
 * Issue 32, finding 8: passEnv names that make another program run code, route its traffic or point at
 * credential configuration. Each is refused when the runtime is built, in any case spelling.
 */
import { describe, expect, it } from "vitest";
import { ClaudeCodeRuntime } from "../../src/claude-code/runtime.js";
import { EnvNotAllowedError } from "../../src/errors/index.js";
import { tempDir, testEnv } from "../support.js";

const refusal = (name: string): EnvNotAllowedError | undefined => {
  try {
    new ClaudeCodeRuntime({ projectDir: tempDir("project"), models: { default: "sonnet" }, env: testEnv({ [name]: "x" }), passEnv: [name] });
  } catch (error) {
    if (error instanceof EnvNotAllowedError) return error;
    throw error;
  }
  return undefined;
};

const FOUND = {
  code: ["PERL5OPT", "RUBYOPT", "PYTHONSTARTUP", "BROWSER", "PAGER"],
  routing: ["COREPACK_NPM_REGISTRY"],
  config: ["KUBECONFIG", "CLOUDSDK_CONFIG", "RIPGREP_CONFIG_PATH"],
};
const FAMILIES = {
  code: ["PERL5LIB", "PERL5DB", "RUBYLIB", "PYTHONPATH", "PYTHONHOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS", "GIT_PAGER", "MANPAGER", "LESSOPEN", "BASH_ENV", "ENV", "ZDOTDIR", "PROMPT_COMMAND", "GCONV_PATH", "LUA_PATH", "GEM_HOME"],
  routing: ["COREPACK_NPM_MIRROR", "YARN_NPM_REGISTRY_SERVER", "PNPM_HOME", "PIP_EXTRA_INDEX", "UV_DEFAULT_INDEX", "CARGO_REGISTRIES_CRATES_IO_PROTOCOL", "GOPROXY", "GOFLAGS", "CONDA_CHANNEL_ALIAS"],
  config: ["KUBE_CONFIG_PATH", "CLOUDSDK_CORE_ACCOUNT", "DOCKER_CONFIG", "GH_CONFIG_DIR", "NETRC", "GNUPGHOME", "PGPASSFILE", "PGSERVICEFILE", "BOTO_CONFIG", "VAULT_ADDR", "WGETRC", "RCLONE_CONFIG"],
};
const REASON = { code: /run code/, routing: /route/, config: /credential|configuration/ };

describe("passEnv refuses names that run code, route traffic or point at credential configuration (issue 32)", () => {
  for (const [kind, names] of Object.entries(FOUND) as Array<[keyof typeof FOUND, string[]]>) {
    it(`the red team's ${kind} names: ${names.join(", ")}`, () => {
      for (const name of names) {
        for (const spelling of [name, name.toLowerCase(), name[0] + name.slice(1).toLowerCase()]) {
          const error = refusal(spelling);
          expect(error, spelling).toBeInstanceOf(EnvNotAllowedError);
          expect(error!.variable).toBe(spelling);
          expect(error!.message).toContain(spelling);
        }
        expect(refusal(name)!.reason, name).toMatch(REASON[kind]);
      }
    });
  }
  for (const [kind, names] of Object.entries(FAMILIES) as Array<[keyof typeof FAMILIES, string[]]>) {
    it(`their families (${kind}): ${names.length} names`, () => {
      for (const name of names) expect(refusal(name), name).toBeInstanceOf(EnvNotAllowedError);
    });
  }
  it("an application name of the caller's still passes", () => {
    for (const name of ["MY_FLAG", "STAND_IN_MODE", "KTX_SUMMARY_STYLE", "APP_FEATURE_SET", "STAND_IN_STARTED_FILE"]) expect(refusal(name), name).toBeUndefined();
  });
});

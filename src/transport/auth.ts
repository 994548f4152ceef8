/**
 * The `auth` option: which provider and credential the CLI uses, chosen explicitly. `login` (the default) is
 * the user's own Claude Code session, as before; every other kind adds back exactly its own variables to the
 * scrubbed environment (env.ts), from the option's fields or, for a name listed in `passEnv`, from `env`, and
 * checks its credential before any process starts (`AuthConfigError`). Nothing falls back from one kind to
 * another. docs/options.md ("Authentication") gives each kind; every variable name below is read by the
 * 2.1.330 binary (`strings` of it; research notes in provider-research.md §3).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { AuthConfigError } from "../errors/index.js";

export type AuthOption =
  | { kind: "login" }
  | { kind: "apiKey"; apiKey?: string }
  | { kind: "oauthToken"; token?: string }
  | { kind: "bedrock"; region?: string; profile?: string; bearerToken?: string; accessKeyId?: string; secretAccessKey?: string; sessionToken?: string; baseUrl?: string; skipAuth?: boolean }
  | { kind: "vertex"; region?: string; projectId?: string; credentialsFile?: string; baseUrl?: string; skipAuth?: boolean }
  | { kind: "foundry"; resource?: string; baseUrl?: string; apiKey?: string; authToken?: string; skipAuth?: boolean };

export type AuthKind = AuthOption["kind"];
export type CloudKind = "bedrock" | "vertex" | "foundry";

const text = z.string().min(1);

export const authOptionSchema = z
  .discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("login") }),
    z.strictObject({ kind: z.literal("apiKey"), apiKey: text.optional() }),
    z.strictObject({ kind: z.literal("oauthToken"), token: text.optional() }),
    z.strictObject({
      kind: z.literal("bedrock"),
      region: text.optional(),
      profile: text.optional(),
      bearerToken: text.optional(),
      accessKeyId: text.optional(),
      secretAccessKey: text.optional(),
      sessionToken: text.optional(),
      baseUrl: z.url().optional(),
      skipAuth: z.boolean().optional(),
    }),
    z.strictObject({ kind: z.literal("vertex"), region: text.optional(), projectId: text.optional(), credentialsFile: text.optional(), baseUrl: z.url().optional(), skipAuth: z.boolean().optional() }),
    z.strictObject({ kind: z.literal("foundry"), resource: text.optional(), baseUrl: z.url().optional(), apiKey: text.optional(), authToken: text.optional(), skipAuth: z.boolean().optional() }),
  ])
  .describe('{ kind: "login" | "apiKey" | "oauthToken" | "bedrock" | "vertex" | "foundry", … }');

interface KindSpec {
  /** The CLI's provider switch, set to "1" (cloud kinds). */
  switchVar?: string;
  /** Set to "1" with `skipAuth` (a gateway or loopback endpoint that needs no cloud credential). */
  skipVar?: string;
  /** Option field → the variable it sets. */
  fields: Record<string, string>;
  /** Settings that must be present: each entry is a list of alternatives (one variable each). */
  required: Array<{ anyOf: string[]; what: string }>;
  /** The credential: alternatives, each a set of variables that must all be present. */
  credential?: { allOf: string[][]; what: string };
  /** The CLI's `account.apiProvider` for this kind. */
  provider: "firstParty" | CloudKind;
}

const KINDS: Record<Exclude<AuthKind, "login">, KindSpec> = {
  apiKey: { fields: { apiKey: "ANTHROPIC_API_KEY" }, required: [], credential: { allOf: [["ANTHROPIC_API_KEY"]], what: "an API key (auth.apiKey, or ANTHROPIC_API_KEY in env named in passEnv)" }, provider: "firstParty" },
  oauthToken: {
    fields: { token: "CLAUDE_CODE_OAUTH_TOKEN" },
    required: [],
    credential: { allOf: [["CLAUDE_CODE_OAUTH_TOKEN"]], what: "an OAuth token from `claude setup-token` (auth.token, or CLAUDE_CODE_OAUTH_TOKEN in env named in passEnv)" },
    provider: "firstParty",
  },
  bedrock: {
    switchVar: "CLAUDE_CODE_USE_BEDROCK",
    skipVar: "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
    fields: {
      region: "AWS_REGION",
      profile: "AWS_PROFILE",
      bearerToken: "AWS_BEARER_TOKEN_BEDROCK",
      accessKeyId: "AWS_ACCESS_KEY_ID",
      secretAccessKey: "AWS_SECRET_ACCESS_KEY",
      sessionToken: "AWS_SESSION_TOKEN",
      baseUrl: "ANTHROPIC_BEDROCK_BASE_URL",
    },
    // The CLI does not read the region from the AWS config file.
    required: [{ anyOf: ["AWS_REGION"], what: "the AWS region (auth.region, or AWS_REGION named in passEnv)" }],
    credential: {
      allOf: [["AWS_BEARER_TOKEN_BEDROCK"], ["AWS_PROFILE"], ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]],
      what: "an AWS credential: auth.bearerToken (AWS_BEARER_TOKEN_BEDROCK), auth.profile (AWS_PROFILE, read from ~/.aws), or auth.accessKeyId with auth.secretAccessKey (and sessionToken if temporary), or those names in passEnv",
    },
    provider: "bedrock",
  },
  vertex: {
    switchVar: "CLAUDE_CODE_USE_VERTEX",
    skipVar: "CLAUDE_CODE_SKIP_VERTEX_AUTH",
    fields: { region: "CLOUD_ML_REGION", projectId: "ANTHROPIC_VERTEX_PROJECT_ID", credentialsFile: "GOOGLE_APPLICATION_CREDENTIALS", baseUrl: "ANTHROPIC_VERTEX_BASE_URL" },
    required: [
      { anyOf: ["CLOUD_ML_REGION"], what: "the Google Cloud region (auth.region, or CLOUD_ML_REGION named in passEnv)" },
      { anyOf: ["ANTHROPIC_VERTEX_PROJECT_ID"], what: "the Google Cloud project (auth.projectId, or ANTHROPIC_VERTEX_PROJECT_ID named in passEnv)" },
    ],
    credential: {
      allOf: [["GOOGLE_APPLICATION_CREDENTIALS"]],
      what: "a Google credential: auth.credentialsFile (GOOGLE_APPLICATION_CREDENTIALS, or that name in passEnv), or application-default credentials from `gcloud auth application-default login` in the HOME the CLI gets",
    },
    provider: "vertex",
  },
  foundry: {
    switchVar: "CLAUDE_CODE_USE_FOUNDRY",
    skipVar: "CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
    fields: { resource: "ANTHROPIC_FOUNDRY_RESOURCE", baseUrl: "ANTHROPIC_FOUNDRY_BASE_URL", apiKey: "ANTHROPIC_FOUNDRY_API_KEY", authToken: "ANTHROPIC_FOUNDRY_AUTH_TOKEN" },
    required: [{ anyOf: ["ANTHROPIC_FOUNDRY_RESOURCE", "ANTHROPIC_FOUNDRY_BASE_URL"], what: "the Foundry resource: auth.resource (its name, ANTHROPIC_FOUNDRY_RESOURCE) or auth.baseUrl (ANTHROPIC_FOUNDRY_BASE_URL), or one of those names in passEnv" }],
    credential: {
      allOf: [["ANTHROPIC_FOUNDRY_API_KEY"], ["ANTHROPIC_FOUNDRY_AUTH_TOKEN"]],
      what: "a Foundry credential: auth.apiKey (ANTHROPIC_FOUNDRY_API_KEY) or auth.authToken (ANTHROPIC_FOUNDRY_AUTH_TOKEN), or one of those names in passEnv",
    },
    provider: "foundry",
  },
};

export const CLOUD_KINDS: readonly CloudKind[] = ["bedrock", "vertex", "foundry"];

export const isCloudKind = (kind: AuthKind | undefined): kind is CloudKind => kind !== undefined && (CLOUD_KINDS as readonly string[]).includes(kind);

/** The CLI's `account.apiProvider` a kind must show (`firstParty` for login, apiKey and oauthToken). */
export const authProvider = (auth: AuthOption | undefined): "firstParty" | CloudKind => (auth && auth.kind !== "login" ? KINDS[auth.kind].provider : "firstParty");

/** The variables a kind may take from `env` when named in `passEnv` (its fields' variables); none for login. */
export function authPassableNames(auth: AuthOption | undefined): string[] {
  return auth && auth.kind !== "login" ? Object.values(KINDS[auth.kind].fields) : [];
}

/** Every variable a kind may set in the child (its fields', its switch and skip variables). */
export function authVariableNames(auth: AuthOption | undefined): string[] {
  if (!auth || auth.kind === "login") return [];
  const spec = KINDS[auth.kind];
  return [...Object.values(spec.fields), ...(spec.switchVar ? [spec.switchVar] : []), ...(spec.skipVar ? [spec.skipVar] : [])];
}

/** Values in the options that are credentials (redacted in transcripts). */
export function authSecrets(auth: AuthOption | undefined): string[] {
  if (!auth) return [];
  const record = auth as Record<string, unknown>;
  return ["apiKey", "token", "bearerToken", "secretAccessKey", "sessionToken", "authToken"].map((name) => record[name]).filter((value): value is string => typeof value === "string");
}

/** Where gcloud's application-default credentials live for the child's HOME (Linux and macOS; %APPDATA% on Windows). */
function applicationDefaultCredentials(env: Record<string, string | undefined>): string | undefined {
  const candidates = [env.HOME && join(env.HOME, ".config", "gcloud", "application_default_credentials.json"), env.APPDATA && join(env.APPDATA, "gcloud", "application_default_credentials.json")];
  return candidates.find((path): path is string => typeof path === "string" && existsSync(path));
}

/**
 * The variables a kind adds to the child's environment, from its fields, else from `env` for a name in
 * `passEnv`; throws `AuthConfigError` when a required setting or the credential is missing. `login`: none.
 */
export function authEnv(auth: AuthOption | undefined, env: Record<string, string | undefined>, passEnv: readonly string[] = []): Record<string, string> {
  if (!auth || auth.kind === "login") return {};
  const spec = KINDS[auth.kind];
  const passed = new Set(passEnv.map((name) => name.toUpperCase()));
  const out: Record<string, string> = {};
  const record = auth as Record<string, unknown>;
  for (const [field, name] of Object.entries(spec.fields)) {
    const value = record[field];
    if (typeof value === "string" && value.length > 0) out[name] = value;
    else if (passed.has(name) && env[name]) out[name] = env[name]!;
  }
  const skip = record.skipAuth === true;
  if (skip && !out[spec.fields.baseUrl ?? ""]) {
    throw new AuthConfigError(auth.kind, "skipAuth is set without a base URL", `skipAuth is for a gateway or test endpoint that signs requests itself: give auth.baseUrl (${spec.fields.baseUrl}) with it, or drop skipAuth and give a credential.`);
  }
  const missing = spec.required.filter((need) => !need.anyOf.some((name) => out[name])).map((need) => need.what);
  const hasCredential = skip || !spec.credential || spec.credential.allOf.some((set) => set.every((name) => out[name])) || (auth.kind === "vertex" && applicationDefaultCredentials(env) !== undefined);
  if (!hasCredential) missing.push(spec.credential!.what);
  if (missing.length > 0) {
    throw new AuthConfigError(auth.kind, `missing ${missing.join("; and ")}`, `Set ${missing.length === 1 ? "it" : "them"} in the auth option, or put the variable in env and name it in passEnv (only this kind's own variables may be named there).`);
  }
  if (spec.switchVar) out[spec.switchVar] = "1";
  if (skip) out[spec.skipVar!] = "1";
  return out;
}

/** One line naming the kind and where its credential came from (results, transcripts, status). */
export function describeAuth(auth: AuthOption | undefined, childEnv?: Record<string, string>): string {
  if (!auth || auth.kind === "login") return "login (your Claude Code session)";
  const names = authVariableNames(auth).filter((name) => childEnv === undefined || childEnv[name] !== undefined);
  return `${auth.kind} (${names.join(", ")})`;
}

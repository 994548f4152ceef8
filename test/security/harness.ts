/**
 * The security suite's tools: a trap server on 127.0.0.1 that records every request (a redirected
 * Messages API call, an OTLP export, a WebFetch), marker files that planted code would create, canary
 * strings that planted instructions would carry into a request, and a registry of attacks so each
 * batch (one CLI start for many planted things) reports one test per attack.
 */
import { createServer, type IncomingMessage } from "node:http";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/testing/scripted-api.js";
import { loadTranscript } from "../../src/transcripts/reader.js";
import { cleanup, remainingChildren, tempDir } from "../support.js";

export interface TrapHit {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface Trap {
  url: string;
  hits: TrapHit[];
  close(): Promise<void>;
}

/** A security suite's end: its trap closed, no CLI left behind, its temporary files gone. */
export function endSuiteAfterAll(trap: () => Trap | undefined): void {
  afterAll(async () => {
    await trap()?.close();
    expect(await remainingChildren()).toEqual([]);
    await cleanup();
  });
}

/** Answers like a Messages API (so a redirected CLI would "succeed" with TRAP) and records everything. */
export async function startTrap(): Promise<Trap> {
  const hits: TrapHit[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      hits.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "msg_trap",
          type: "message",
          role: "assistant",
          model: "trap",
          content: [{ type: "text", text: "TRAP ANSWER" }],
          stop_reason: "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A directory where planted code leaves marker files; `path(id)` is the marker an attack would create. */
export class Markers {
  readonly dir = tempDir("markers");
  path(id: string): string {
    return join(this.dir, id);
  }
  /** Shell command that records it ran (and what it read on stdin, e.g. a hook's prompt). */
  command(id: string): string {
    return `cat > '${this.path(id)}'`;
  }
  found(): string[] {
    return existsSync(this.dir) ? readdirSync(this.dir) : [];
  }
}

export const canary = (label: string) => `CANARY-${label}-${randomUUID().slice(0, 8)}`;

export function plant(files: Record<string, unknown>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  }
}

/** Every request body the scripted API and the trap received, as text (for canary searches). */
export function everythingSent(requests: readonly RecordedRequest[], trap?: Trap): string {
  return [...requests.map((request) => JSON.stringify({ headers: request.headers, body: request.body })), ...(trap?.hits ?? []).map((hit) => JSON.stringify(hit))].join("\n");
}

/** Names of the variables the CLI was started with (the transcript header records names only). */
export function childEnvNames(transcriptPath: string): string[] {
  return loadTranscript(transcriptPath).header.envNames;
}

export interface Attack {
  /** Attack class, as listed in docs/isolation.md. */
  kind: string;
  name: string;
  /** Throws (an expect) when the attack got through. */
  held(): void;
}

/**
 * One batch: `run` starts the CLI once with everything planted; then each attack is its own test.
 * A failed run leaves every attack failing with the run's error.
 */
export function attackBatch(title: string, attacks: Attack[], run: () => Promise<void>, timeoutMs = 120_000): void {
  describe(title, () => {
    let failure: unknown;
    beforeAll(async () => {
      try {
        await run();
      } catch (error) {
        failure = error;
      }
    }, timeoutMs);
    afterAll(() => undefined);
    it.each(attacks.map((attack) => [`${attack.kind}: ${attack.name}`, attack] as const))("%s", (_label, attack) => {
      if (failure) throw failure;
      attack.held();
    });
  });
}

export const noMarkers = (markers: Markers, ...ids: string[]) => () => {
  const found = markers.found();
  for (const id of ids) expect(found, `marker ${id}`).not.toContain(id);
};

/** One of each secret shape the second round found unredacted, as a tool returns them (issue 20, item 5); the third round plants them again. */
export const DB_PASSWORD = "Pg-s3cret-Passw0rd";
export const HARMLESS_NAMED = "Zq9aK3bL7cM1dN5eP8fQ2gR4";
export const SECOND_ROUND_SECRETS: Record<string, { text: string; secret: string }> = {
  "Authorization: Basic": { text: "Authorization: Basic dXNlcjpodW50ZXIyLXBhc3N3b3Jk", secret: "dXNlcjpodW50ZXIyLXBhc3N3b3Jk" },
  "Stripe sk_live_": { text: "stripe sk_live_51HxQ2eLkdIwHu7ixvZ0aBcDeFgHiJ", secret: "51HxQ2eLkdIwHu7ixvZ0aBcDeFgHiJ" },
  "Slack webhook URL": { text: "https://hooks.slack.com/services/T0A1B2C3D/B0E1F2G3H/AbCdEfGhIjKlMnOpQrStUvWx", secret: "AbCdEfGhIjKlMnOpQrStUvWx" },
  "Google ya29.": { text: "ya29.a0AfH6SMBx-Long_Google_Access_Token_Value_123", secret: "a0AfH6SMBx-Long_Google_Access_Token_Value_123" },
  "Hugging Face hf_": { text: "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", secret: "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh" },
  "SendGrid SG.": { text: "SG.AbCdEfGhIjKlMnOpQrStUv.WxYzAbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIjKlMnO", secret: "WxYzAbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIjKlMnO" },
  "Azure AccountKey=": { text: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy+/==;EndpointSuffix=core.windows.net", secret: "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy" },
  "Cookie: header": { text: "Cookie: session=sessAbc123Def456Ghi789; csrf=csrfXyz987Uvw654", secret: "sessAbc123Def456Ghi789" },
  "PGP private key block": { text: "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGPgpPrivateBodyLine0123456789abcdef\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----", secret: "lQOYBGPgpPrivateBodyLine0123456789abcdef" },
  "Sentry DSN": { text: "https://0123456789abcdef0123456789abcdef@o123456.ingest.sentry.io/987654", secret: "0123456789abcdef0123456789abcdef" },
  "DATABASE_URL password alone in a tool error": { text: `FATAL: password authentication failed (tried "${DB_PASSWORD}")`, secret: DB_PASSWORD },
  "secret-looking value under a harmless name": { text: `build ${HARMLESS_NAMED} ready`, secret: HARMLESS_NAMED },
};

/**
 * What a verified CLI version sends on the first-party path (`api.anthropic.com`, an OAuth login),
 * checked by check.ts before any request is forwarded. Each version's shape is recorded data, not
 * code: `fixtures/transcripts/<version>/wire-shape.json` (it ships in the package), written by
 * `ktx-claude-code fixtures record-wire` (src/testing/wire-recorder.ts) from a run of that CLI against
 * the scripted API's first-party mode, and loaded here (shape-file.ts turns its placeholders into
 * regexes). A version with no file, or a file that does not load, has no shape: the interceptor then
 * refuses its Messages requests (docs/isolation.md, "The wire check").
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadWireShape, type WireShape } from "./shape-file.js";

export type { WireShape } from "./shape-file.js";

/** Where the shapes live: the package's recorded fixtures (src/… and dist/… are both three levels down). */
export const WIRE_SHAPE_ROOT = fileURLToPath(new URL("../../../fixtures/transcripts", import.meta.url));

/** The file of a version's shape. */
export const wireShapePath = (version: string, root = WIRE_SHAPE_ROOT): string => join(root, version, "wire-shape.json");

/** Every recorded shape under `root`, by version, and the files that did not load (with why). */
export function loadWireShapes(root = WIRE_SHAPE_ROOT): { shapes: Record<string, WireShape>; problems: Record<string, string> } {
  const shapes: Record<string, WireShape> = {};
  const problems: Record<string, string> = {};
  const versions = existsSync(root) ? readdirSync(root).filter((name) => /^\d+\.\d+\.\d+$/.test(name)) : [];
  for (const version of versions) {
    const path = wireShapePath(version, root);
    if (!existsSync(path)) continue;
    try {
      shapes[version] = loadWireShape(JSON.parse(readFileSync(path, "utf8")), version);
    } catch (error) {
      problems[version] = `${path}: ${(error as Error).message}`;
    }
  }
  return { shapes, problems };
}

/** The package's own shapes, loaded once; replaced only by `withdrawUnloadableWireShapes` (tests). */
let loaded = loadWireShapes();

const versionsOf = (shapes: Record<string, WireShape>) => Object.keys(shapes).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));

/** The check's shape of a version, undefined when none is recorded (or its file did not load). */
export function wireShapeFor(version: string): WireShape | undefined {
  return Object.hasOwn(loaded.shapes, version) ? loaded.shapes[version] : undefined;
}

/** Why a version's shape file did not load, when it did not. */
export function wireShapeProblem(version: string): string | undefined {
  return Object.hasOwn(loaded.problems, version) ? loaded.problems[version] : undefined;
}

/** The versions whose first-party shape is recorded. */
export let WIRE_VERSIONS: readonly string[] = versionsOf(loaded.shapes);

/** The hosts any recorded version connects to: what the runtime's CA is constrained to. */
export const WIRE_HOSTS: readonly string[] = [...new Set(Object.values(loaded.shapes).flatMap((shape) => shape.hosts))].sort();

/**
 * Tests only (the package does not export it): a broken shape file without touching the package's. Each
 * version whose file under `root` does not load loses its shape, with that file's problem, as if its
 * own file were broken; a file that loads changes nothing. It can only take shapes away (more refused,
 * never less), so it cannot loosen anyone's check. Returns the undo.
 */
export function withdrawUnloadableWireShapes(root: string): () => void {
  const before = loaded;
  const { problems } = loadWireShapes(root);
  const shapes = Object.fromEntries(Object.entries(before.shapes).filter(([version]) => !Object.hasOwn(problems, version)));
  loaded = { shapes, problems: { ...before.problems, ...problems } };
  WIRE_VERSIONS = versionsOf(shapes);
  return () => {
    loaded = before;
    WIRE_VERSIONS = versionsOf(before.shapes);
  };
}

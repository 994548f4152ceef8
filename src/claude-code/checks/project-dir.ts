/** The project directory is checked when a call starts, not at construction (KTX builds runtimes eagerly). */
import { statSync } from "node:fs";
import { ProjectDirNotFoundError } from "../../errors/index.js";

/** Throws `ProjectDirNotFoundError` unless `projectDir` (already absolute) is an existing directory. */
export function requireProjectDir(projectDir: string): void {
  let isDir = false;
  try {
    isDir = statSync(projectDir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new ProjectDirNotFoundError(projectDir);
}

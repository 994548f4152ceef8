/**
 * Files opened as what they must be (issue 32, finding 7). A path someone else can write may be a
 * FIFO, a device or a symlink: reading a FIFO blocks the host's event loop until a writer comes (so no
 * timeout fires), a device never ends, and a symlink planted where we write sends our output to its
 * target. Every file the library reads (policy, config, transcripts) and writes (transcripts, CLI
 * output) goes through here. Node's fs has no "open only if regular" flag, so the open is non-blocking
 * and the kind is checked on the open descriptor (fstat), which no rename can swap afterwards.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, type Stats } from "node:fs";

/** The kind of a file that is not a regular one, for messages ("a FIFO", "a character device", …). */
export function fileKind(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  if (stats.isDirectory()) return "a directory";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

/** A path that is there but is not a regular file. */
export class NotRegularFileError extends Error {
  readonly code = "ENOTREG";
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The text of `path` if it is a regular file (symlinks to one are followed: an administrator may link
 * a managed file), undefined if it does not exist; throws `NotRegularFileError` for anything else and
 * the fs error for one that cannot be read.
 */
export function readRegularFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** Opens `path` for reading only if it is a regular file; the caller closes the descriptor. Throws `NotRegularFileError` or the fs error. */
export function openRegularFile(path: string): number {
  const fd = openSync(path, READ_FLAGS);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Opens `path` for writing without following a symlink at its last component. A new name (`exclusive`)
 * is created exclusively: if anything is there already, it fails with EEXIST. A chosen name may replace
 * an earlier regular file of its own (truncated after the check), but never a FIFO, a device, or a file
 * with other hard links (whose other name would be written through).
 */
export function openForWrite(path: string, options: { exclusive?: boolean; mode?: number } = {}): number {
  const base = constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);
  if (options.exclusive) return openSync(path, base | constants.O_EXCL, options.mode ?? 0o600);
  const fd = openSync(path, base | (constants.O_NONBLOCK ?? 0), options.mode ?? 0o600);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    if (stats.nlink > 1) throw new NotRegularFileError(path, `a file with ${stats.nlink} hard links (another name would be written through)`);
    ftruncateSync(fd, 0);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

import { randomBytes } from 'node:crypto';
import { rm, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The free space an embedded engine's directory needs before it opens: PGlite writes its WAL in
 * 16 MiB segments and aborts (`RuntimeError: Aborted()`) when a write fails, chDB needs room for
 * its parts and merges. Below this, a start is refused with a message that says so.
 */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

const MIB = 1024 * 1024;

/** `12.5 MiB`. */
export function mebibytes(bytes: number): string {
  return `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;
}

/** What a failed write in `dir` most likely means, in words; undefined for an error of another kind. */
export function describeWriteError(error: unknown): string | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOSPC':
      return 'its filesystem is full';
    case 'EDQUOT':
      return "this user's disk quota is used up";
    case 'EROFS':
      return 'its filesystem is read-only';
    case 'EACCES':
    case 'EPERM':
      return `this user (uid ${process.getuid?.() ?? '?'}) may not write there`;
    default:
      return undefined;
  }
}

/**
 * Why `dir` (which exists) cannot take an engine's files now, or undefined when it can: less than
 * MIN_FREE_BYTES free (or no free inode) on its filesystem, or no file can be created there.
 */
export async function storageProblem(dir: string): Promise<string | undefined> {
  const { bavail, bsize, ffree, files } = await statfs(dir);
  const free = bavail * bsize;
  if (free < MIN_FREE_BYTES) {
    return `its filesystem has ${mebibytes(free)} free, and at least ${mebibytes(MIN_FREE_BYTES)} are needed`;
  }
  // Some filesystems (btrfs) report no inode counts at all: only a count that ran out means something.
  if (files > 0 && ffree === 0) return 'its filesystem has no free inode left';
  const probe = path.join(dir, `.write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(probe, randomBytes(4096), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const described = describeWriteError(error);
    if (described) return described;
    throw error;
  } finally {
    await rm(probe, { force: true });
  }
  return undefined;
}

import { randomBytes } from 'node:crypto';
import { rm, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** PGlite writes its WAL in 16 MiB segments and aborts when a write fails; chDB needs room to merge. */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

const MIB = 1024 * 1024;

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

/** Too little free space or inodes, or no file can be created. */
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

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type StandaloneConfig } from '@hogbase/config';
import {
  DataDirInUseError,
  describeHolder,
  describeWriteError,
  lockDataDir,
  restrictToOwner,
  storageProblem,
  type DataDirLock,
} from '@hogbase/postgres';

/** What a new file or directory of this process may grant beyond its owner: nothing. */
export const OWNER_ONLY_UMASK = 0o077;

/** A directory the process keeps data in, by the setting that names it. */
interface DataDirectory {
  setting: 'DATA_DIR' | 'CLICKHOUSE_DATA_PATH';
  dir: string;
}

/** DATA_DIR, and chDB's data path when CLICKHOUSE_DATA_PATH puts it outside DATA_DIR. */
function dataDirectories({ management, clickhouse }: StandaloneConfig): DataDirectory[] {
  const directories: DataDirectory[] = [{ setting: 'DATA_DIR', dir: management.dataDir }];
  if (!clickhouse.url && path.relative(management.dataDir, clickhouse.dataPath).startsWith('..')) {
    directories.push({ setting: 'CLICKHOUSE_DATA_PATH', dir: clickhouse.dataPath });
  }
  return directories;
}

/** A file-system error about `dir` as the one-line message of a bad setting; other errors unchanged. */
function asSettingError({ setting, dir }: DataDirectory, error: unknown): unknown {
  const described = describeWriteError(error);
  return described ? new ConfigError(setting, dir, described) : error;
}

/**
 * Makes the data directories ready for the engines, or stops the start with a one-line message
 * naming the directory and the problem: another process holds DATA_DIR, its filesystem is full or
 * read-only, this user may not write there.
 *
 * In this order, before anything opens a file there:
 * 1. SECURITY: the process umask, so that what chDB and this process create from now on is born
 *    0600/0700 (the umask is per process, so it covers chDB's native threads too); then each
 *    directory, 0700.
 * 2. DATA_DIR's lock (data-dir-lock.util.ts in @hogbase/postgres), held until release() or the process's death: a second
 *    process would corrupt the embedded engines' files, or cut the first off from its socket.
 * 3. Group and other bits stripped from what an older version left readable.
 * 4. Free space and writability (storageProblem): PGlite on a full disk dies with nothing but
 *    `RuntimeError: Aborted()`.
 */
export async function holdDataDirs(config: StandaloneConfig): Promise<DataDirLock> {
  process.umask(OWNER_ONLY_UMASK);
  const directories = dataDirectories(config);
  for (const directory of directories) {
    await mkdir(directory.dir, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      throw asSettingError(directory, error);
    });
  }
  const [dataDir] = directories;
  const lock = await lockDataDir(dataDir.dir).catch((error: unknown) => {
    if (error instanceof DataDirInUseError) {
      throw new ConfigError(
        dataDir.setting,
        dataDir.dir,
        `in use by ${describeHolder(error.holder)}: one process per data directory. Stop that one first, or set another ${dataDir.setting}`,
      );
    }
    throw asSettingError(dataDir, error);
  });
  try {
    for (const directory of directories) {
      await restrictToOwner(directory.dir);
      const problem = await storageProblem(directory.dir);
      if (problem) throw new ConfigError(directory.setting, directory.dir, problem);
    }
  } catch (error) {
    await lock.release();
    throw error;
  }
  return lock;
}

/** Tells a second process that asks the lock which ports this one serves on. */
export function announcePorts(lock: DataDirLock, urls: Record<string, string>): void {
  lock.announce({
    ports: Object.fromEntries(Object.entries(urls).map(([name, url]) => [name, Number(new URL(url).port)])),
  });
}

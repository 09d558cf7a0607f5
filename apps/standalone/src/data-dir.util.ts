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

export const OWNER_ONLY_UMASK = 0o077;

interface DataDirectory {
  setting: 'DATA_DIR' | 'CLICKHOUSE_DATA_PATH';
  dir: string;
}

function dataDirectories({ management, clickhouse }: StandaloneConfig): DataDirectory[] {
  const directories: DataDirectory[] = [{ setting: 'DATA_DIR', dir: management.dataDir }];
  if (!clickhouse.url && path.relative(management.dataDir, clickhouse.dataPath).startsWith('..')) {
    directories.push({ setting: 'CLICKHOUSE_DATA_PATH', dir: clickhouse.dataPath });
  }
  return directories;
}

function asSettingError({ setting, dir }: DataDirectory, error: unknown): unknown {
  const described = describeWriteError(error);
  return described ? new ConfigError(setting, dir, described) : error;
}

/**
 * Readies the data directories, or stops the start with a one-line message naming the directory.
 * In this order, before anything opens a file there:
 * 1. SECURITY: the umask, so what chDB and this process create is born 0600/0700 (it is per process,
 *    covering chDB's threads); then each directory, 0700.
 * 2. DATA_DIR's lock, held until release() or death: a second process would corrupt the engines' files.
 * 3. Group and other bits stripped from what an older version left readable.
 * 4. Free space and writability: PGlite on a full disk dies with nothing but `RuntimeError: Aborted()`.
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

/** For a second process that asks the lock which ports this one serves on. */
export function announcePorts(lock: DataDirLock, urls: Record<string, string>): void {
  lock.announce({
    ports: Object.fromEntries(Object.entries(urls).map(([name, url]) => [name, Number(new URL(url).port)])),
  });
}

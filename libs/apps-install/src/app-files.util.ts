import { AppInstallError } from './app-install.error';
import type { AppFiles } from './app-install.types';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Anything not UTF-8 or holding a NUL byte stays bytes. */
export function decodeAppFile(bytes: Uint8Array): string | Uint8Array {
  if (bytes.includes(0)) return bytes;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return bytes;
  }
}

/** TRICKY: checked on the raw name, before the top folder is stripped, so `package/../../x` is refused. */
export function safeEntryPath(rawName: string): string {
  const name = rawName.replace(/\\/g, '/');
  if (name.includes('\0') || name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new AppInstallError(`The archive has an entry outside its folder: ${JSON.stringify(rawName)}`);
  }
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) {
    throw new AppInstallError(`The archive has an entry outside its folder: ${JSON.stringify(rawName)}`);
  }
  return segments.join('/');
}

export function isInNodeModules(path: string): boolean {
  return path.split('/').includes('node_modules');
}

/** `package/` of npm tarballs, `repo-<sha>/` of GitHub zips. */
export function commonTopFolder(paths: string[]): string | null {
  let top: string | null = null;
  for (const path of paths) {
    const slash = path.indexOf('/');
    if (slash === -1) return null;
    const first = path.slice(0, slash);
    if (top === null) top = first;
    else if (top !== first) return null;
  }
  return top;
}

/** `subpath` is a folder of a monorepo; `node_modules/` is left out. */
export function appFilesFromEntries(entries: Map<string, Uint8Array>, subpath: string | null): AppFiles {
  const top = commonTopFolder([...entries.keys()]);
  const prefix = [top, subpath === null ? null : safeEntryPath(subpath)]
    .filter((part): part is string => part !== null && part !== '')
    .map((part) => `${part}/`)
    .join('');
  const files: AppFiles = {};
  for (const [path, bytes] of entries) {
    if (!path.startsWith(prefix)) continue;
    const relative = path.slice(prefix.length);
    if (relative === '' || isInNodeModules(relative)) continue;
    files[relative] = decodeAppFile(bytes);
  }
  if (subpath !== null && Object.keys(files).length === 0) {
    throw new AppInstallError(`The archive has no folder ${JSON.stringify(subpath)}`);
  }
  return files;
}

export function packageJsonVersion(files: AppFiles): string | null {
  const packageJson = files['package.json'];
  if (typeof packageJson !== 'string') return null;
  try {
    const parsed: unknown = JSON.parse(packageJson);
    if (parsed !== null && typeof parsed === 'object' && 'version' in parsed) {
      const version = parsed.version;
      return typeof version === 'string' && version !== '' ? version : null;
    }
  } catch {
    // Only plugin.json must parse.
  }
  return null;
}

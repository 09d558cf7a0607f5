import { AppInstallError } from './app-install.error';
import type { AppFiles } from './app-install.types';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Text files become strings; anything that is not UTF-8 or holds a NUL byte (images, databases) stays bytes. */
export function decodeAppFile(bytes: Uint8Array): string | Uint8Array {
  if (bytes.includes(0)) return bytes;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return bytes;
  }
}

/**
 * An archive entry's path made relative and clean, or an error when it would land outside the
 * app's folder. TRICKY: checked on the raw name, before any top folder is stripped, so that
 * `package/../../x` is refused rather than normalised into something harmless-looking.
 */
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

/** The single folder every entry lives in (`package/` of npm tarballs, `repo-<sha>/` of GitHub zips), if any. */
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

/**
 * The app's files from an archive's entries: the single top folder stripped, then only the
 * entries under `subpath` (a folder of a monorepo), `node_modules/` left out.
 */
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

/** `package.json`'s `version`, when the app has one. */
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
    // A broken package.json only means no version; plugin.json is what must parse.
  }
  return null;
}

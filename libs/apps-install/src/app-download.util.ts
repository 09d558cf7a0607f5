import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEgressFetch, EgressPolicy, type EgressFetch } from '@hogbase/egress';
import { unpackArchive } from './app-archive.util';
import { appFilesFromEntries, commonTopFolder, decodeAppFile, packageJsonVersion } from './app-files.util';
import { fetchBytes, fetchJson } from './app-http.util';
import { AppInstallError } from './app-install.error';
import type { AppFiles, AppSourceOptions, DownloadedApp } from './app-install.types';
import {
  DEFAULT_NPM_REGISTRY_URL,
  parseAppUrl,
  stripUrlSecrets,
  trimTrailingSlashes,
  type AppSource,
} from './app-url.util';

const MIB = 1024 * 1024;
/** More is probably a whole checkout. */
const MAX_LOCAL_FILES = 5000;
const COMMIT_SHA = /^[0-9a-f]{40}$/;

export interface ResolvedSourceOptions {
  localAppsDirectory: string | null;
  npmRegistryUrl: string;
  githubApiUrl: string;
  githubCodeloadUrl: string;
  gitlabUrl: string;
  maxArchiveBytes: number;
  maxUnpackedBytes: number;
  timeoutMs: number;
  fetch: EgressFetch;
}

const STRICT_EGRESS = EgressPolicy.strict();
/** One fetch (so one connection pool) per policy. */
const egressFetches = new WeakMap<EgressPolicy, EgressFetch>();

function egressFetch(policy: EgressPolicy): EgressFetch {
  let fetch = egressFetches.get(policy);
  if (fetch === undefined) {
    fetch = createEgressFetch(policy);
    egressFetches.set(policy, fetch);
  }
  return fetch;
}

export function resolveSourceOptions(options: AppSourceOptions): ResolvedSourceOptions {
  return {
    localAppsDirectory: options.localAppsDirectory ?? null,
    npmRegistryUrl: trimTrailingSlashes(options.npmRegistryUrl ?? DEFAULT_NPM_REGISTRY_URL),
    githubApiUrl: trimTrailingSlashes(options.githubApiUrl ?? 'https://api.github.com'),
    githubCodeloadUrl: trimTrailingSlashes(options.githubCodeloadUrl ?? 'https://codeload.github.com'),
    gitlabUrl: trimTrailingSlashes(options.gitlabUrl ?? 'https://gitlab.com'),
    maxArchiveBytes: options.maxArchiveBytes ?? 20 * MIB,
    maxUnpackedBytes: options.maxUnpackedBytes ?? 50 * MIB,
    timeoutMs: options.timeoutMs ?? 30_000,
    fetch: egressFetch(options.egress ?? STRICT_EGRESS),
  };
}

/** For refs and names that hold slashes. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** Any URL form PostHog accepts; nothing is executed or built here. */
export async function downloadApp(url: string, options: AppSourceOptions = {}): Promise<DownloadedApp> {
  const settings = resolveSourceOptions(options);
  const source = parseAppUrl(url, settings.npmRegistryUrl);
  const urlWithoutSecrets = stripUrlSecrets(url);
  if (source.kind === 'file') {
    const { files, folderName } = await readLocalApp(source.location, settings);
    return { files, urlWithoutSecrets, tag: packageJsonVersion(files), defaultName: folderName };
  }
  const { files, tag } = await downloadArchive(source, settings);
  return { files, urlWithoutSecrets, tag, defaultName: null };
}

async function downloadArchive(
  source: Exclude<AppSource, { kind: 'file' }>,
  settings: ResolvedSourceOptions,
): Promise<{ files: AppFiles; tag: string | null }> {
  const get = async (archiveUrl: string, headers: Record<string, string> = {}) => {
    const bytes = await fetchBytes(archiveUrl, {
      fetch: settings.fetch,
      timeoutMs: settings.timeoutMs,
      maxBytes: settings.maxArchiveBytes,
      headers,
      what: 'the app',
    });
    return unpackArchive(bytes, settings.maxUnpackedBytes);
  };

  switch (source.kind) {
    case 'github': {
      const ref = source.ref ?? 'HEAD';
      const archiveUrl = `${settings.githubCodeloadUrl}/${encodePath(source.owner)}/${encodePath(source.repo)}/zip/${encodePath(ref)}`;
      const unpacked = await get(archiveUrl, source.token ? { Authorization: `token ${source.token}` } : {});
      const files = appFilesFromEntries(unpacked.entries, source.subpath);
      return { files, tag: archiveCommit(unpacked) ?? source.ref ?? packageJsonVersion(files) };
    }
    case 'gitlab': {
      const ref = source.ref ?? 'HEAD';
      // A private project's archive is only reachable through the API with the token as a header.
      const archiveUrl = source.token
        ? `${settings.gitlabUrl}/api/v4/projects/${encodeURIComponent(source.projectPath)}/repository/archive.zip?sha=${encodeURIComponent(ref)}`
        : `${settings.gitlabUrl}/${encodePath(source.projectPath)}/-/archive/${encodePath(ref)}/${encodeURIComponent(`${source.repo}-${ref.replace(/\//g, '-')}`)}.zip`;
      const unpacked = await get(archiveUrl, source.token ? { 'PRIVATE-TOKEN': source.token } : {});
      const files = appFilesFromEntries(unpacked.entries, source.subpath);
      return { files, tag: archiveCommit(unpacked) ?? source.ref ?? packageJsonVersion(files) };
    }
    case 'npm': {
      const registryHeaders: Record<string, string> = source.token
        ? { Authorization: `Bearer ${source.token}` }
        : {};
      const tarballUrl =
        source.tarballUrl ?? (await npmTarballUrl(source.name, source.version, registryHeaders, settings));
      const sameOrigin = new URL(tarballUrl).origin === new URL(settings.npmRegistryUrl).origin;
      const unpacked = await get(tarballUrl, sameOrigin ? registryHeaders : {});
      const files = appFilesFromEntries(unpacked.entries, null);
      return { files, tag: packageJsonVersion(files) ?? source.version };
    }
    case 'archive': {
      const unpacked = await get(source.url);
      const files = appFilesFromEntries(unpacked.entries, null);
      return { files, tag: packageJsonVersion(files) };
    }
  }
}

/** `git archive` writes it as the zip comment; GitHub also names the folder after it. */
function archiveCommit(unpacked: {
  entries: Map<string, Uint8Array>;
  comment: string | null;
}): string | null {
  const comment = unpacked.comment?.trim() ?? '';
  if (COMMIT_SHA.test(comment)) return comment;
  const top = commonTopFolder([...unpacked.entries.keys()]);
  const suffix = top?.match(/-([0-9a-f]{40})$/);
  return suffix?.[1] ?? null;
}

async function npmTarballUrl(
  name: string,
  version: string | null,
  headers: Record<string, string>,
  settings: ResolvedSourceOptions,
): Promise<string> {
  const manifestUrl = `${settings.npmRegistryUrl}/${name}/${encodeURIComponent(version ?? 'latest')}`;
  const manifest = await fetchJson(manifestUrl, {
    fetch: settings.fetch,
    timeoutMs: settings.timeoutMs,
    headers,
    what: `the npm package ${name}`,
  });
  const tarball = (manifest as { dist?: { tarball?: unknown } } | null)?.dist?.tarball;
  if (typeof tarball !== 'string' || !/^https?:\/\//.test(tarball)) {
    throw new AppInstallError(`The npm registry has no tarball for ${name}@${version ?? 'latest'}`);
  }
  return tarball;
}

function isInside(root: string, candidate: string): boolean {
  const path = relative(root, candidate);
  return path === '' || (!path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path));
}

/** TRICKY: the folder and every symlink in it are compared by real path, so neither `..` nor a link can leave. */
async function readLocalApp(
  location: string,
  settings: ResolvedSourceOptions,
): Promise<{ files: AppFiles; folderName: string }> {
  if (!settings.localAppsDirectory) {
    throw new AppInstallError(
      'Installing apps from the local file system is disabled: no local apps directory is set',
    );
  }
  let requested: string;
  try {
    requested = location.startsWith('file://')
      ? fileURLToPath(location)
      : resolve(settings.localAppsDirectory, location.slice('file:'.length));
  } catch {
    throw new AppInstallError(`Not a valid file: URL: ${location}`);
  }
  let root: string;
  try {
    root = await realpath(settings.localAppsDirectory);
  } catch {
    throw new AppInstallError('The local apps directory does not exist');
  }
  let folder: string;
  try {
    folder = await realpath(requested);
  } catch {
    throw new AppInstallError(`Could not find the folder ${location}`);
  }
  if (!isInside(root, folder)) {
    throw new AppInstallError('file: apps must be inside the local apps directory');
  }
  if (!(await stat(folder)).isDirectory()) throw new AppInstallError(`${location} is not a folder`);

  const files: AppFiles = {};
  let totalBytes = 0;
  let fileCount = 0;
  const visited = new Set<string>();
  const walk = async (directory: string, prefix: string): Promise<void> => {
    if (visited.has(directory)) return;
    visited.add(directory);
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === '.git') continue;
      const relativePath = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      let real = join(directory, entry.name);
      if ((await lstat(real)).isSymbolicLink()) {
        try {
          real = await realpath(real);
        } catch {
          continue; // A dangling link is no file of the app.
        }
        if (!isInside(root, real)) {
          throw new AppInstallError(`${relativePath} links outside the local apps directory`);
        }
      }
      const info = await stat(real);
      if (info.isDirectory()) {
        await walk(real, relativePath);
      } else if (info.isFile()) {
        fileCount += 1;
        totalBytes += info.size;
        if (fileCount > MAX_LOCAL_FILES)
          throw new AppInstallError(`The app has more than ${MAX_LOCAL_FILES} files`);
        if (totalBytes > settings.maxUnpackedBytes) {
          throw new AppInstallError(`The app is larger than ${settings.maxUnpackedBytes} bytes`);
        }
        files[relativePath] = decodeAppFile(new Uint8Array(await readFile(real)));
      }
    }
  };
  await walk(folder, '');
  return { files, folderName: basename(folder) };
}

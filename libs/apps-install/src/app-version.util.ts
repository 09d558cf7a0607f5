import { encodePath, resolveSourceOptions } from './app-download.util';
import { fetchJson } from './app-http.util';
import { AppInstallError } from './app-install.error';
import type { AppSourceOptions } from './app-install.types';
import { parseAppUrl } from './app-url.util';

function stringField(document: unknown, field: string, what: string): string {
  const value =
    document !== null && typeof document === 'object'
      ? (document as Record<string, unknown>)[field]
      : undefined;
  if (typeof value !== 'string' || value === '')
    throw new AppInstallError(`The answer for ${what} has no "${field}"`);
  return value;
}

/** Comparable with the `tag` {@link downloadApp} gave; null for `file:` folders and plain archive URLs. */
export async function latestVersion(url: string, options: AppSourceOptions = {}): Promise<string | null> {
  const settings = resolveSourceOptions(options);
  const source = parseAppUrl(url, settings.npmRegistryUrl);
  const request = { fetch: settings.fetch, timeoutMs: settings.timeoutMs };
  switch (source.kind) {
    case 'npm': {
      const headers: Record<string, string> = source.token ? { Authorization: `Bearer ${source.token}` } : {};
      const what = `the latest version of ${source.name}`;
      const manifest = await fetchJson(`${settings.npmRegistryUrl}/${source.name}/latest`, {
        ...request,
        headers,
        what,
      });
      return stringField(manifest, 'version', what);
    }
    case 'github': {
      const headers: Record<string, string> = { Accept: 'application/vnd.github+json' };
      if (source.token) headers.Authorization = `token ${source.token}`;
      const what = `the latest commit of ${source.owner}/${source.repo}`;
      const commit = await fetchJson(
        `${settings.githubApiUrl}/repos/${encodePath(source.owner)}/${encodePath(source.repo)}/commits/${encodeURIComponent(source.ref ?? 'HEAD')}`,
        { ...request, headers, what },
      );
      return stringField(commit, 'sha', what);
    }
    case 'gitlab': {
      const headers: Record<string, string> = source.token ? { 'PRIVATE-TOKEN': source.token } : {};
      const what = `the latest commit of ${source.projectPath}`;
      const commit = await fetchJson(
        `${settings.gitlabUrl}/api/v4/projects/${encodeURIComponent(source.projectPath)}/repository/commits/${encodeURIComponent(source.ref ?? 'HEAD')}`,
        { ...request, headers, what },
      );
      return stringField(commit, 'id', what);
    }
    case 'file':
    case 'archive':
      return null;
  }
}

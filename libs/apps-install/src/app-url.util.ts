import { AppInstallError } from './app-install.error';

export const UNSUPPORTED_URL_MESSAGE = 'Must be a GitHub/GitLab repository or a npm package URL!';

export const DEFAULT_NPM_REGISTRY_URL = 'https://registry.npmjs.org';

/** Where an app URL points, as PostHog's `parse_url` tells the forms apart. */
export type AppSource =
  | { kind: 'file'; location: string }
  | {
      kind: 'github';
      owner: string;
      repo: string;
      ref: string | null;
      /** `/tree/<ref>/<folder>`. */
      subpath: string | null;
      token: string | null;
    }
  | {
      kind: 'gitlab';
      /** `group/project`, nested groups included. */
      projectPath: string;
      repo: string;
      ref: string | null;
      subpath: string | null;
      token: string | null;
    }
  | {
      kind: 'npm';
      name: string;
      version: string | null;
      /** Set when the URL was a tarball on the registry: downloaded as is. */
      tarballUrl: string | null;
      token: string | null;
    }
  | { kind: 'archive'; url: string };

/** PostHog users put `?private_token=` in the query string. */
export function stripUrlSecrets(url: string): string {
  const trimmed = url.trim();
  const cut = trimmed.search(/[?#]/);
  return cut === -1 ? trimmed : trimmed.slice(0, cut);
}

export function trimTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}

function unsupported(): AppInstallError {
  return new AppInstallError(UNSUPPORTED_URL_MESSAGE);
}

function pathSegments(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => decodeURIComponent(segment));
}

export function parseAppUrl(url: string, npmRegistryUrl = DEFAULT_NPM_REGISTRY_URL): AppSource {
  const trimmed = url.trim();
  if (trimmed.startsWith('file:')) return { kind: 'file', location: stripUrlSecrets(trimmed) };

  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw unsupported();
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw unsupported();
  const token = parsed.searchParams.get('private_token');
  let segments: string[];
  try {
    segments = pathSegments(parsed.pathname);
  } catch {
    throw unsupported();
  }
  const host = parsed.hostname.toLowerCase();

  if (host === 'github.com' || host === 'www.github.com') return parseGitHub(segments, token);
  if (host === 'gitlab.com' || host === 'www.gitlab.com') return parseGitLab(segments, token);
  if (host === 'npmjs.com' || host === 'www.npmjs.com') return parseNpmPage(segments, token);

  const tarball = parseRegistryTarball(stripUrlSecrets(trimmed), npmRegistryUrl, token);
  if (tarball) return tarball;
  return { kind: 'archive', url: trimmed };
}

function parseGitHub(segments: string[], token: string | null): AppSource {
  const [owner, rawRepo, action, ...rest] = segments;
  if (!owner || !rawRepo) throw unsupported();
  const repo = rawRepo.replace(/\.git$/, '');
  if (action === undefined) return { kind: 'github', owner, repo, ref: null, subpath: null, token };
  if ((action === 'tree' || action === 'commit') && rest[0]) {
    const subpath = rest.slice(1).join('/');
    return { kind: 'github', owner, repo, ref: rest[0], subpath: subpath || null, token };
  }
  if (action === 'releases' && rest[0] === 'tag' && rest[1] && rest.length === 2) {
    return { kind: 'github', owner, repo, ref: rest[1], subpath: null, token };
  }
  throw unsupported();
}

function parseGitLab(segments: string[], token: string | null): AppSource {
  // GitLab paths nest groups, so the project ends where `-` (or the older bare `tree`) starts.
  let end = segments.indexOf('-');
  let actionAt = end + 1;
  if (end === -1) {
    end = segments.findIndex((segment, index) => index >= 2 && (segment === 'tree' || segment === 'commit'));
    actionAt = end;
  }
  const project = end === -1 ? segments : segments.slice(0, end);
  if (project.length < 2) throw unsupported();
  const projectPath = project.join('/');
  const repo = project[project.length - 1].replace(/\.git$/, '');
  if (end === -1) return { kind: 'gitlab', projectPath, repo, ref: null, subpath: null, token };
  const action = segments[actionAt];
  const ref = segments[actionAt + 1];
  if ((action !== 'tree' && action !== 'commit') || !ref) throw unsupported();
  const subpath = segments.slice(actionAt + 2).join('/');
  return { kind: 'gitlab', projectPath, repo, ref, subpath: subpath || null, token };
}

function parseNpmPage(segments: string[], token: string | null): AppSource {
  if (segments[0] !== 'package' || !segments[1]) throw unsupported();
  const scoped = segments[1].startsWith('@');
  if (scoped && !segments[2]) throw unsupported();
  const name = scoped ? `${segments[1]}/${segments[2]}` : segments[1];
  const rest = segments.slice(scoped ? 3 : 2);
  if (rest.length === 0) return { kind: 'npm', name, version: null, tarballUrl: null, token };
  if (rest[0] === 'v' && rest[1] && rest.length === 2) {
    return { kind: 'npm', name, version: rest[1], tarballUrl: null, token };
  }
  throw unsupported();
}

/** `<registry>/<name>/-/<basename>-<version>.tgz`, the form npm publishes tarballs under. */
function parseRegistryTarball(url: string, npmRegistryUrl: string, token: string | null): AppSource | null {
  const registry = `${trimTrailingSlashes(npmRegistryUrl)}/`;
  if (!url.startsWith(registry)) return null;
  const rest = url.slice(registry.length);
  const separator = rest.indexOf('/-/');
  if (separator === -1) return null;
  let name: string;
  try {
    name = decodeURIComponent(rest.slice(0, separator));
  } catch {
    return null;
  }
  const fileName = rest.slice(separator + 3);
  const baseName = name.slice(name.lastIndexOf('/') + 1);
  if (
    !/^(@[^/]+\/)?[^/@]+$/.test(name) ||
    !fileName.startsWith(`${baseName}-`) ||
    !fileName.endsWith('.tgz')
  ) {
    return null;
  }
  const version = fileName.slice(baseName.length + 1, -'.tgz'.length);
  if (version === '') return null;
  return { kind: 'npm', name, version, tarballUrl: url, token };
}

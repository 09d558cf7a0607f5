// @ts-check
// The container image, built without Docker or a registry: podman builds docker/Dockerfile on a
// stand-in for its base image made from Debian bookworm (debootstrap) and the pinned Node.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, copyFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../json.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheDir = path.join(homedir(), '.cache', 'hogbase');
const packageJson = /** @type {{ version: string, devDependencies: Record<string, string> }} */ (
  parseJson(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'))
);

export const NODE_VERSION = packageJson.devDependencies.node;
/** The Dockerfile's FROM (its NODE_IMAGE default): the stand-in's tag. */
export const BASE_IMAGE = baseImage(readFileSync(path.join(repoRoot, 'docker/Dockerfile'), 'utf8'));
/** As the official node image bundles it. */
const NPM_VERSION = '11.19.1';
export const VERSION = packageJson.version;
export const IMAGE = `localhost/hogbase/hogbase:${VERSION}`;
export const EMBEDDED_IMAGE = `localhost/hogbase/hogbase:${VERSION}-embedded-clickhouse`;

/** runc (crun is refused) and limits the sandbox allows. */
export const PODMAN_RUNTIME = ['--runtime', 'runc'];
export const PODMAN_LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1000:1000'];

const PACKAGES = { podman: 'podman', buildah: 'buildah', runc: 'runc', debootstrap: 'debootstrap' };

/** @typedef {ReturnType<typeof import('../test-services.mjs').testServices> & { log: (message: string) => void }} Services */

/** @param {string} dockerfile */
function baseImage(dockerfile) {
  const match = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile);
  if (!match) throw new Error('docker/Dockerfile has no `ARG NODE_IMAGE=<image>` line');
  return match[1];
}

/** When one is missing. @param {Services} services */
export async function ensureContainerTools({ run, aptInstall, log }) {
  const missing = [];
  for (const [command, debianPackage] of Object.entries(PACKAGES)) {
    const found = await run('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`]);
    if (found.code !== 0) missing.push(debianPackage);
  }
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(`missing ${missing.join(', ')}: install them (Debian packages)`);
  log(`installing ${missing.join(', ')} (apt-get)`);
  await aptInstall(missing);
}

/**
 * A stand-in for `node:<version>-bookworm-slim` unless podman has it: bookworm minbase from the
 * machine's mirror, Node from the `node` package; the root filesystem is cached, so debootstrap runs once.
 * @param {Services} services
 */
export async function ensureBaseImage({ run, runOrThrow, log }) {
  if ((await run('podman', ['image', 'exists', BASE_IMAGE])).code === 0) return;
  const tarball = path.join(cacheDir, `base-bookworm-node-${NODE_VERSION}-npm-${NPM_VERSION}.tar`);
  if (!existsSync(tarball)) {
    const nodeBinary = path.join(repoRoot, 'node_modules/node/bin/node');
    const reported = (await runOrThrow(nodeBinary, ['--version'])).stdout.trim();
    if (reported !== `v${NODE_VERSION}`) {
      throw new Error(`node_modules/node is ${reported}, package.json pins ${NODE_VERSION}: run npm ci`);
    }
    const work = mkdtempSync(path.join(tmpdir(), 'hogbase-base-'));
    try {
      const rootfs = path.join(work, 'rootfs');
      const mirror = debianMirror();
      log(`debootstrap --variant=minbase bookworm from ${mirror} (once per machine)`);
      await runOrThrow('debootstrap', ['--variant=minbase', 'bookworm', rootfs, mirror]);
      const npmTarball = (
        await runOrThrow('npm', ['pack', `npm@${NPM_VERSION}`, '--silent', '--pack-destination', work])
      ).stdout.trim();
      const npmDir = path.join(rootfs, 'usr/local/lib/node_modules/npm');
      mkdirSync(npmDir, { recursive: true });
      await runOrThrow('tar', ['-xzf', path.join(work, npmTarball), '-C', npmDir, '--strip-components=1']);
      copyFileSync(nodeBinary, path.join(rootfs, 'usr/local/bin/node'));
      symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(rootfs, 'usr/local/bin/npm'));
      symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', path.join(rootfs, 'usr/local/bin/npx'));
      // As the slim images do: no package lists, caches or documentation.
      for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man']) {
        await runOrThrow('sh', ['-c', `rm -rf "${path.join(rootfs, dir)}"/*`]);
      }
      mkdirSync(cacheDir, { recursive: true });
      await runOrThrow('tar', ['-C', rootfs, '-cf', `${tarball}.partial`, '.']);
      await runOrThrow('mv', [`${tarball}.partial`, tarball]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  log(`importing the stand-in base image as ${BASE_IMAGE}`);
  await runOrThrow('podman', [
    'import',
    '--change',
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--change',
    'CMD ["node"]',
    tarball,
    BASE_IMAGE,
  ]);
}

/** Deb822 or one-line form. */
function debianMirror() {
  const sources = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const match =
    /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(sources) ??
    /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(sources);
  return match ? match[1] : 'http://deb.debian.org/debian';
}

/**
 * Never pulling. A CA bundle named by NODE_EXTRA_CA_CERTS (a TLS-intercepting proxy's) is lent to npm.
 * @param {Services} services
 * @param {{ tag: string, embeddedClickHouse: boolean }} image
 */
export async function buildImage({ runOrThrow, log }, { tag, embeddedClickHouse }) {
  const caArgs = [];
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  if (ca && existsSync(ca)) {
    caArgs.push(
      '-v',
      `${ca}:/etc/ssl/hogbase-build-ca.pem:ro`,
      '--build-arg',
      'NODE_EXTRA_CA_CERTS=/etc/ssl/hogbase-build-ca.pem',
    );
  }
  const revision = (await runOrThrow('git', ['rev-parse', '--short', 'HEAD'])).stdout.trim();
  const started = Date.now();
  await runOrThrow('podman', [
    'build',
    ...PODMAN_RUNTIME,
    ...PODMAN_LIMITS,
    '--pull=never',
    '--layers',
    '-f',
    'docker/Dockerfile',
    '-t',
    tag,
    '--build-arg',
    `EMBEDDED_CLICKHOUSE=${embeddedClickHouse}`,
    '--build-arg',
    `VERSION=${VERSION}`,
    '--build-arg',
    `REVISION=${revision}`,
    ...caArgs,
    repoRoot,
  ]);
  const size = Number(
    (await runOrThrow('podman', ['image', 'inspect', '--format', '{{.Size}}', tag])).stdout.trim(),
  );
  log(`built ${tag} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${(size / 1e6).toFixed(0)} MB`);
  return { tag, size };
}

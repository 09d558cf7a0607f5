// @ts-check
// kubectl renders each kustomize target; PyPI kubernetes-validate (pinned, in a virtualenv) validates
// it strictly: an unknown field is an error.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseJson } from '../json.mjs';

const run = promisify(execFile);

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const KUBERNETES_VALIDATE_VERSION = '1.37.0';
/** The oldest the manifests target (preStop `sleep` on by default from 1.30) and the newest the validator bundles. */
export const KUBERNETES_VERSIONS = ['1.31.0', '1.37.0'];
const VENV_DIR = path.join(os.homedir(), '.cache', 'hogbase', 'kubernetes-validate');

/** Kinds from CRDs: no bundled schema, checked by our own rules only. */
const CUSTOM_KINDS = new Set(['ServiceMonitor']);

/** @typedef {(line: string) => void} Log */

/** @param {Log} log */
export async function ensureKubectl(log) {
  try {
    await run('kubectl', ['version', '--client'], { encoding: 'utf8' });
    return;
  } catch {
    // fall through to the install
  }
  if (process.getuid?.() === 0) {
    log('kubectl not found: apt-get install -y kubectl');
    try {
      await run('apt-get', ['install', '-y', 'kubectl'], { maxBuffer: 64 * 1024 * 1024 });
      await run('kubectl', ['version', '--client']);
      return;
    } catch (error) {
      throw new Error(`kubectl is missing and apt-get install -y kubectl failed: ${firstLine(error)}`);
    }
  }
  throw new Error(
    'kubectl is missing: install it (it renders the kustomize overlays), e.g. apt-get install kubectl',
  );
}

/** @typedef {Error & { stdout?: string, stderr?: string }} ExecError */

/** @param {unknown} error */
function firstLine(error) {
  const failed = /** @type {ExecError | undefined} */ (error);
  const text = String(failed?.stderr || failed?.message || error);
  return text.trim().split('\n').slice(-3).join(' | ');
}

/** @param {Log} log */
export async function ensureValidator(log) {
  const bin = path.join(VENV_DIR, 'bin');
  const validator = path.join(bin, 'kubernetes-validate');
  let installed;
  try {
    installed = (await run(validator, ['--version'], { encoding: 'utf8' })).stdout.trim();
  } catch {
    installed = undefined;
  }
  if (installed !== KUBERNETES_VALIDATE_VERSION) {
    log(`installing kubernetes-validate==${KUBERNETES_VALIDATE_VERSION} into ${VENV_DIR}`);
    try {
      if (!existsSync(path.join(bin, 'python'))) await run('python3', ['-m', 'venv', VENV_DIR]);
      await run(
        path.join(bin, 'pip'),
        ['install', '--quiet', `kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}`],
        {
          maxBuffer: 64 * 1024 * 1024,
        },
      );
    } catch (error) {
      throw new Error(`could not install kubernetes-validate into ${VENV_DIR}: ${firstLine(error)}`);
    }
  }
  // The bundled schemas must cover the versions we validate against: fail rather than skip.
  const { stdout } = await run(
    path.join(bin, 'python'),
    [
      '-c',
      'import kubernetes_validate, os, json; d = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema"); print(json.dumps(sorted(os.listdir(d))))',
    ],
    { encoding: 'utf8' },
  );
  const bundled = new Set(/** @type {string[]} */ (parseJson(stdout)));
  for (const version of KUBERNETES_VERSIONS) {
    if (!bundled.has(`v${version}-local-strict`)) {
      throw new Error(
        `kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} has no strict schemas for Kubernetes ${version}`,
      );
    }
  }
  return { validator, python: path.join(bin, 'python') };
}

/**
 * @param {import('./kubernetes.types.d.ts').ManifestTarget} target
 * @param {string} workDir
 * @param {string} k8sDir
 */
export async function render(target, workDir, k8sDir) {
  let dir = path.join(k8sDir, target.dir);
  if (target.components) {
    // kustomize accepts only relative paths to other kustomizations.
    dir = await mkdtemp(path.join(workDir, `${target.name}-`));
    const relative = (/** @type {string} */ to) => path.relative(dir, path.join(k8sDir, to));
    await writeFile(
      path.join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${relative(target.dir)}`,
        'components:',
        ...target.components.map((component) => `  - ${relative(component)}`),
        '',
      ].join('\n'),
    );
  }
  try {
    const { stdout } = await run('kubectl', ['kustomize', dir], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    throw new Error(`kubectl kustomize ${path.relative(REPO_ROOT, dir)} failed: ${firstLine(error)}`);
  }
}

/**
 * @param {string} python
 * @param {string} file
 */
export async function parseYaml(python, file) {
  const { stdout } = await run(
    python,
    [
      '-c',
      'import sys, json, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)',
      file,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return /** @type {import('./kubernetes.types.d.ts').Manifest[]} */ (parseJson(stdout));
}

/**
 * @param {string} validator
 * @param {string} file
 * @param {string} version
 */
export async function validateSchemas(validator, file, version) {
  const failures = [];
  let output;
  try {
    const result = await run(validator, ['--strict', '--quiet', '-k', version, file], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    output = `${result.stdout}\n${result.stderr}`;
  } catch (error) {
    const failed = /** @type {ExecError} */ (error);
    output = `${failed.stdout ?? ''}\n${failed.stderr ?? ''}`;
    if (!/ERROR/.test(output)) failures.push(`kubernetes-validate failed: ${firstLine(error)}`);
  }
  for (const line of output.split('\n')) {
    const text = line.replace(file, '').trim();
    if (text.startsWith('ERROR')) failures.push(`schema ${version}: ${text.replace(/^ERROR\s*/, '')}`);
    const missing = /^WARN .*Couldn't find schema for kind (\S+)/.exec(text);
    if (missing && !CUSTOM_KINDS.has(missing[1]))
      failures.push(`schema ${version}: no schema for kind ${missing[1]}`);
  }
  return failures;
}

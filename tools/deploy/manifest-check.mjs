// @ts-check
// Renders every kustomize target under k8s/, validates it against the schemas and applies our rules.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkObjects } from './manifest-rules.mjs';
import {
  ensureKubectl,
  ensureValidator,
  KUBERNETES_VALIDATE_VERSION,
  KUBERNETES_VERSIONS,
  parseYaml,
  REPO_ROOT,
  render,
  validateSchemas,
} from './manifest-toolchain.mjs';

export const K8S_DIR = path.join(REPO_ROOT, 'k8s');

/** @type {import('./kubernetes.types.d.ts').ManifestTarget[]} */
export const TARGETS = [
  { name: 'base', dir: 'base', versioned: false, autoscaled: true },
  { name: 'small', dir: 'overlays/small', versioned: true, autoscaled: false },
  { name: 'production', dir: 'overlays/production', versioned: true, autoscaled: true },
  {
    name: 'production+service-monitor',
    dir: 'overlays/production',
    components: ['components/service-monitor'],
    versioned: true,
    autoscaled: true,
  },
];

/**
 * `k8sDir`: another copy of k8s/ (the self-test breaks copies).
 * @param {{ log?: (line: string) => void, targets?: typeof TARGETS, k8sDir?: string }} [options]
 */
export async function checkManifests({
  log = (line) => console.log(line),
  targets = TARGETS,
  k8sDir = K8S_DIR,
} = {}) {
  await ensureKubectl(log);
  const { validator, python } = await ensureValidator(log);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'hogbase-manifests-'));
  /** @type {string[]} */
  const failures = [];
  /** @type {Record<string, { objects: number, kinds: Record<string, number> }>} */
  const summary = {};
  try {
    for (const target of targets) {
      const prefix = `[${target.name}]`;
      let yamlText;
      try {
        yamlText = await render(target, workDir, k8sDir);
      } catch (error) {
        failures.push(`${prefix} ${/** @type {Error} */ (error).message}`);
        continue;
      }
      const file = path.join(workDir, `${target.name}.yaml`);
      await writeFile(file, yamlText);
      const objects = await parseYaml(python, file);
      /** @type {Record<string, number>} */
      const kinds = {};
      for (const object of objects) kinds[object.kind] = (kinds[object.kind] ?? 0) + 1;
      summary[target.name] = { objects: objects.length, kinds };
      for (const version of KUBERNETES_VERSIONS) {
        failures.push(
          ...(await validateSchemas(validator, file, version)).map((failure) => `${prefix} ${failure}`),
        );
      }
      failures.push(...checkObjects(objects, target).map((failure) => `${prefix} ${failure}`));
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  return {
    failures,
    summary,
    kubernetesValidateVersion: KUBERNETES_VALIDATE_VERSION,
    kubernetesVersions: KUBERNETES_VERSIONS,
  };
}

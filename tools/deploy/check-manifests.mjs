#!/usr/bin/env node
// @ts-check
// Renders every kustomize target under k8s/, validates it strictly against the Kubernetes schemas and
// applies our rules; exit 1 on any failure. `--self-test` breaks copies of k8s/: every check must fail.
import { checkManifests } from './manifest-check.mjs';
import { selfTestManifests } from './manifest-self-test.mjs';

async function main() {
  if (process.argv.includes('--self-test')) {
    const escaped = await selfTestManifests();
    for (const line of escaped) console.error(`  ✗ ${line}`);
    console.log(
      escaped.length ? `${escaped.length} mutation(s) escaped the checks` : 'every mutation was caught',
    );
    process.exitCode = escaped.length ? 1 : 0;
    return;
  }
  let result;
  try {
    result = await checkManifests();
  } catch (error) {
    console.error(`check-manifests: ${/** @type {Error} */ (error).message}`);
    process.exitCode = 1;
    return;
  }
  for (const [name, { objects, kinds }] of Object.entries(result.summary)) {
    const counts = Object.entries(kinds)
      .sort(([left], [right]) => left.localeCompare(right))
      .map(([kind, count]) => `${count} ${kind}`)
      .join(', ');
    console.log(`${name}: ${objects} objects (${counts})`);
  }
  console.log(
    `schemas: kubernetes-validate ${result.kubernetesValidateVersion}, strict, Kubernetes ${result.kubernetesVersions.join(' and ')}`,
  );
  if (result.failures.length) {
    console.error(`\n${result.failures.length} failure(s):`);
    for (const failure of result.failures) console.error(`  ✗ ${failure}`);
    process.exitCode = 1;
  } else {
    console.log('all manifests pass');
  }
}

await main();

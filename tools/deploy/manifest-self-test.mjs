// @ts-check
// A check that cannot fail is a defect: each mutation breaks a copy of k8s/ one way and must fail as expected.
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkManifests, K8S_DIR, TARGETS } from './manifest-check.mjs';

/**
 * `from` → `to` (or `append`) in `file`, plus `create`'s file: `target` (default production) must fail with `expect`.
 * @typedef {{ file: string, expect: string, target?: string, create?: [string, string] }
 *   & ({ from: string, to: string } | { append: string })} Mutation
 */

/** @type {Mutation[]} */
const MUTATIONS = [
  {
    file: 'base/capture.yaml',
    from: 'allowPrivilegeEscalation: false',
    to: 'allowPrivilegeEscalation: true',
    expect: 'allowPrivilegeEscalation must be false',
  },
  {
    file: 'base/ingestion.yaml',
    from: 'readOnlyRootFilesystem: true',
    to: 'readOnlyRootFilesystem: false',
    expect: 'readOnlyRootFilesystem must be true',
  },
  {
    file: 'base/capture.yaml',
    from: 'drop: [ALL]',
    to: 'drop: [NET_RAW]',
    expect: 'capabilities.drop must include ALL',
  },
  {
    file: 'base/migrate-job.yaml',
    from: 'type: RuntimeDefault',
    to: 'type: Unconfined',
    expect: 'seccompProfile',
  },
  { file: 'base/ingestion.yaml', from: 'runAsUser: 10001', to: 'runAsUser: 0', expect: 'runAsUser' },
  {
    file: 'base/management.yaml',
    from: 'enableServiceLinks: false',
    to: 'enableServiceLinks: false\n      hostNetwork: true',
    expect: 'hostNetwork is set',
  },
  {
    file: 'base/workers.yaml',
    from: 'sizeLimit: 512Mi',
    to: 'sizeLimit: 512Mi\n        - name: host\n          hostPath:\n            path: /var',
    expect: 'is a hostPath',
  },
  {
    file: 'base/management.yaml',
    from: 'path: /_ready',
    to: 'path: /_health',
    expect: 'readinessProbe must be httpGet /_ready',
  },
  {
    file: 'base/capture.yaml',
    from: 'path: /_health\n              port: http\n            periodSeconds: 2',
    to: 'path: /healthz\n              port: http\n            periodSeconds: 2',
    expect: 'startupProbe must be httpGet /_health',
  },
  {
    file: 'base/workers.yaml',
    from: 'terminationGracePeriodSeconds: 45',
    to: 'terminationGracePeriodSeconds: 20',
    expect: 'must exceed preStop',
  },
  // The first is the init container's limit (the overlays patch only the main container's).
  {
    file: 'base/management.yaml',
    from: '              memory: 256Mi\n',
    to: '',
    expect: 'no resources.limits.memory',
  },
  {
    file: 'base/management.yaml',
    from: "'migrate', '--wait', '--only', 'postgres,clickhouse'",
    to: "'migrate'",
    expect: 'no initContainer running',
  },
  {
    file: 'base/capture.yaml',
    from: 'revisionHistoryLimit: 5',
    to: 'revisionHistoryLimt: 5',
    expect: 'schema 1.31.0',
  },
  { file: 'base/ingress.yaml', from: 'path: /e\n', to: 'path: /\n', expect: 'routes /api' },
  { file: 'base/ingress.yaml', from: 'path: /api\n', to: 'path: /\n', expect: 'exposes /metrics' },
  {
    file: 'base/ingress.yaml',
    from: 'host: api.example.com',
    to: 'host: capture.example.com',
    expect: 'routes to both capture and management',
  },
  {
    file: 'overlays/production/autoscaling.yaml',
    from: 'maxReplicas: 12',
    to: 'maxReplicas: 16',
    expect: 'exceeds KAFKA_TOPIC_PARTITIONS',
  },
  {
    file: 'base/horizontal-pod-autoscalers.yaml',
    from: 'name: cpu',
    to: 'name: memory',
    expect: 'capture must scale on CPU',
  },
  {
    file: 'base/pod-disruption-budgets.yaml',
    from: 'app.kubernetes.io/component: workers',
    to: 'app.kubernetes.io/component: worker',
    expect: 'no PodDisruptionBudget selects',
  },
  {
    file: 'overlays/production/kustomization.yaml',
    from: 'value: 2',
    to: 'value: 3',
    expect: 'blocks every node drain',
  },
  {
    file: 'base/network-policies.yaml',
    from: 'policyTypes: [Ingress, Egress]',
    to: 'policyTypes: [Egress]',
    expect: 'no default-deny NetworkPolicy',
  },
  { file: 'base/network-policies.yaml', from: 'port: 8030', to: 'port: 8031', expect: 'reach port 8030' },
  {
    file: 'base/namespace.yaml',
    from: 'enforce: restricted',
    to: 'enforce: baseline',
    expect: 'pod-security.kubernetes.io/enforce',
  },
  {
    file: 'base/config.env',
    append: 'DATABASE_URL=postgres://hogbase:hogbase@postgres/hogbase\n',
    expect: 'holds secret settings DATABASE_URL',
  },
  {
    file: 'base/kustomization.yaml',
    from: '  - ingress.yaml',
    to: '  - ingress.yaml\n  - secret.yaml',
    create: [
      'base/secret.yaml',
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: hogbase-secrets\nstringData:\n  ENCRYPTION_KEYS: changeme\n',
    ],
    expect: 'a Secret with values',
  },
  {
    file: 'overlays/small/kustomization.yaml',
    from: 'value: hogbase-migrate-0.1.0',
    to: 'value: hogbase-migrate-0.0.9',
    expect: 'name it hogbase-migrate-0.1.0',
    target: 'small',
  },
];

/**
 * The mutations the checks failed to catch.
 * @param {{ log?: (line: string) => void }} [options]
 */
export async function selfTestManifests({ log = (line) => console.log(line) } = {}) {
  const escaped = [];
  for (const mutation of MUTATIONS) {
    const copy = await mkdtemp(path.join(os.tmpdir(), 'hogbase-k8s-mutant-'));
    try {
      await cp(K8S_DIR, copy, { recursive: true });
      const file = path.join(copy, mutation.file);
      if ('append' in mutation) {
        await appendFile(file, mutation.append);
      } else {
        const text = await readFile(file, 'utf8');
        if (!text.includes(mutation.from))
          throw new Error(`self-test: "${mutation.from}" is no longer in k8s/${mutation.file}`);
        await writeFile(file, text.replace(mutation.from, mutation.to));
      }
      if (mutation.create) await writeFile(path.join(copy, mutation.create[0]), mutation.create[1]);
      const targetName = mutation.target ?? 'production';
      const { failures } = await checkManifests({
        log,
        k8sDir: copy,
        targets: TARGETS.filter((target) => target.name === targetName),
      });
      const caught = failures.some((failure) => failure.includes(mutation.expect));
      const change =
        'append' in mutation
          ? `appending to ${mutation.file}`
          : `${mutation.file}: ${JSON.stringify(mutation.from)} -> ${JSON.stringify(mutation.to)}`;
      log(`${caught ? 'caught' : 'MISSED'}: ${change}`);
      if (!caught)
        escaped.push(
          `${change} was not reported as "${mutation.expect}" (got: ${failures.join('; ') || 'no failure'})`,
        );
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  }
  return escaped;
}

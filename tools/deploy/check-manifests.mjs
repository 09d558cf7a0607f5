#!/usr/bin/env node
// Renders every kustomize target under k8s/ and checks it offline:
//   1. `kubectl kustomize` builds it;
//   2. every object validates against the Kubernetes JSON schemas (PyPI kubernetes-validate,
//      pinned, in a virtualenv under ~/.cache/hogbase), strictly: an unknown field is an error;
//   3. our own rules: Pod Security Standard "restricted", read-only root, probes, resources,
//      preStop and grace period, no secret values, the capture host never routes /api, ingestion
//      bounded by the partition count, every Deployment covered by a PDB and NetworkPolicies.
//
// Usage: node tools/deploy/check-manifests.mjs  (exit code 1 on any failure)
//        node tools/deploy/check-manifests.mjs --self-test  (breaks copies of k8s/: every check must fail)
// From code: `const { failures, summary } = await checkManifests()`, `await selfTestManifests()`.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const K8S_DIR = path.join(REPO_ROOT, 'k8s');

export const KUBERNETES_VALIDATE_VERSION = '1.37.0';
/**
 * The oldest version the manifests target (the kubelet's preStop `sleep` is on by default from
 * 1.30, topology spread `matchLabelKeys` from 1.27) and the newest the validator bundles.
 */
export const KUBERNETES_VERSIONS = ['1.31.0', '1.37.0'];
const VENV_DIR = path.join(os.homedir(), '.cache', 'hogbase', 'kubernetes-validate');

/** Kinds from CRDs: no bundled schema, checked by our own rules only. */
const CUSTOM_KINDS = new Set(['ServiceMonitor']);

/** The image's drain budget after SIGTERM (docker/Dockerfile contract): capture's Kafka ack, workers' 8 s hand-back. */
const DRAIN_SECONDS = 15;
const EXPECTED_USER = 10001;
const SECRET_KEYS = ['DATABASE_URL', 'ENCRYPTION_KEYS', 'CLICKHOUSE_PASSWORD', 'SMTP_URL'];
const DEFAULT_TOPIC_PARTITIONS = 8;
const WRITABLE_PATHS = ['/data', '/tmp'];
const RESTRICTED_VOLUME_TYPES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

/**
 * What to render. `components` are added over `dir` in a temporary kustomization; `versioned`:
 * the migrate Job must carry the image tag in its name; `autoscaled`: capture and ingestion
 * must have HPAs.
 */
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

async function ensureKubectl(log) {
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

function firstLine(error) {
  const text = String(error?.stderr || error?.message || error);
  return text.trim().split('\n').slice(-3).join(' | ');
}

async function ensureValidator(log) {
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
  const bundled = new Set(JSON.parse(stdout));
  for (const version of KUBERNETES_VERSIONS) {
    if (!bundled.has(`v${version}-local-strict`)) {
      throw new Error(
        `kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} has no strict schemas for Kubernetes ${version}`,
      );
    }
  }
  return { validator, python: path.join(bin, 'python') };
}

async function render(target, workDir, k8sDir) {
  let dir = path.join(k8sDir, target.dir);
  if (target.components) {
    // kustomize accepts only relative paths to other kustomizations.
    dir = await mkdtemp(path.join(workDir, `${target.name}-`));
    const relative = (to) => path.relative(dir, path.join(k8sDir, to));
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

async function parseYaml(python, file) {
  const { stdout } = await run(
    python,
    [
      '-c',
      'import sys, json, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)',
      file,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout);
}

async function validateSchemas(validator, file, version) {
  const failures = [];
  let output;
  try {
    const result = await run(validator, ['--strict', '--quiet', '-k', version, file], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    output = `${result.stdout}\n${result.stderr}`;
  } catch (error) {
    output = `${error.stdout ?? ''}\n${error.stderr ?? ''}`;
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

// ---------------------------------------------------------------------------------------------
// Our own rules. Each returns failure messages naming the object.

const id = (object) => `${object.kind}/${object.metadata?.name}`;

function matchesSelector(selector, labels = {}) {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    if (operator === 'In' && !(has && values.includes(labels[key]))) return false;
    if (operator === 'NotIn' && has && values.includes(labels[key])) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function podTemplate(object) {
  if (object.kind === 'CronJob') return object.spec?.jobTemplate?.spec?.template;
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(object.kind))
    return object.spec?.template;
  if (object.kind === 'Pod') return object;
  return undefined;
}

function allContainers(pod) {
  return [
    ...(pod.initContainers ?? []).map((container) => ({ container, init: true })),
    ...(pod.containers ?? []).map((container) => ({ container, init: false })),
    ...(pod.ephemeralContainers ?? []).map((container) => ({ container, init: true })),
  ];
}

/** Pod Security Standard "restricted" (v1.31 rules), plus our image's uid and read-only root. */
export function checkRestricted(object) {
  const failures = [];
  const where = id(object);
  const pod = podTemplate(object)?.spec;
  if (!pod) return [`${where}: no pod template`];
  const podContext = pod.securityContext ?? {};
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'])
    if (pod[field]) failures.push(`${where}: ${field} is set`);
  if (podContext.sysctls?.length) failures.push(`${where}: sysctls are set`);
  const volumes = new Map();
  for (const volume of pod.volumes ?? []) {
    const types = Object.keys(volume).filter((key) => key !== 'name');
    for (const type of types) {
      if (!RESTRICTED_VOLUME_TYPES.has(type))
        failures.push(`${where}: volume ${volume.name} is a ${type} (not allowed by "restricted")`);
    }
    volumes.set(volume.name, volume);
  }
  if (podContext.seccompProfile?.type === 'Unconfined')
    failures.push(`${where}: pod seccompProfile is Unconfined`);
  if (podContext.runAsUser === 0) failures.push(`${where}: pod runAsUser is 0`);
  for (const { container } of allContainers(pod)) {
    const name = `${where} container ${container.name}`;
    const context = container.securityContext ?? {};
    if (context.privileged) failures.push(`${name}: privileged`);
    if (context.allowPrivilegeEscalation !== false)
      failures.push(`${name}: allowPrivilegeEscalation must be false`);
    const drop = context.capabilities?.drop ?? [];
    if (!drop.includes('ALL')) failures.push(`${name}: capabilities.drop must include ALL`);
    const added = (context.capabilities?.add ?? []).filter((capability) => capability !== 'NET_BIND_SERVICE');
    if (added.length) failures.push(`${name}: adds capabilities ${added.join(', ')}`);
    const runAsNonRoot = context.runAsNonRoot ?? podContext.runAsNonRoot;
    if (runAsNonRoot !== true) failures.push(`${name}: runAsNonRoot must be true (pod or container)`);
    const runAsUser = context.runAsUser ?? podContext.runAsUser;
    if (runAsUser !== EXPECTED_USER)
      failures.push(`${name}: runAsUser must be ${EXPECTED_USER} (the image's user), is ${runAsUser}`);
    const seccomp = context.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
      failures.push(`${name}: seccompProfile must be RuntimeDefault`);
    if (context.procMount && context.procMount !== 'Default')
      failures.push(`${name}: procMount ${context.procMount}`);
    if (
      context.seLinuxOptions?.type &&
      !/^(container_t|container_init_t|container_kvm_t)$/.test(context.seLinuxOptions.type)
    ) {
      failures.push(`${name}: seLinuxOptions.type ${context.seLinuxOptions.type}`);
    }
    for (const port of container.ports ?? [])
      if (port.hostPort) failures.push(`${name}: hostPort ${port.hostPort}`);
    if (context.readOnlyRootFilesystem !== true)
      failures.push(`${name}: readOnlyRootFilesystem must be true`);
    for (const writable of WRITABLE_PATHS) {
      const mount = (container.volumeMounts ?? []).find((candidate) => candidate.mountPath === writable);
      if (!mount)
        failures.push(`${name}: no volume at ${writable} (the image writes there; the root is read-only)`);
      else if (!volumes.get(mount.name)?.emptyDir)
        failures.push(`${name}: ${writable} should be an emptyDir`);
    }
    for (const kind of ['requests', 'limits']) {
      for (const resource of ['cpu', 'memory']) {
        if (container.resources?.[kind]?.[resource] === undefined)
          failures.push(`${name}: no resources.${kind}.${resource}`);
      }
    }
    for (const env of container.env ?? []) {
      if (SECRET_KEYS.includes(env.name) && env.value !== undefined)
        failures.push(`${name}: ${env.name} has a literal value (use a secretKeyRef)`);
    }
    if (
      !/^hogbase\/hogbase:[A-Za-z0-9_.-]+$/.test(container.image ?? '') ||
      container.image.endsWith(':latest')
    ) {
      failures.push(`${name}: image ${container.image} is not hogbase/hogbase:<version>`);
    }
  }
  return failures;
}

function probeOn(probe, path, container) {
  const get = probe?.httpGet;
  if (!get) return false;
  if (get.path !== path) return false;
  return (container.ports ?? []).some((port) => port.name === get.port || port.containerPort === get.port);
}

function preStopSeconds(container) {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep?.seconds !== undefined) return preStop.sleep.seconds;
  const command = preStop?.exec?.command ?? [];
  const sleep = command.join(' ').match(/sleep\s+(\d+)/);
  return sleep ? Number(sleep[1]) : undefined;
}

export function checkDeployment(object) {
  const failures = [];
  const pod = object.spec.template.spec;
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  for (const container of pod.containers ?? []) {
    const name = `${id(object)} container ${container.name}`;
    if (!probeOn(container.livenessProbe, '/_health', container))
      failures.push(`${name}: livenessProbe must be httpGet /_health on a container port`);
    if (!probeOn(container.readinessProbe, '/_ready', container))
      failures.push(`${name}: readinessProbe must be httpGet /_ready on a container port`);
    if (!probeOn(container.startupProbe, '/_health', container))
      failures.push(`${name}: startupProbe must be httpGet /_health on a container port`);
    const preStop = preStopSeconds(container);
    if (preStop === undefined) failures.push(`${name}: no preStop pause (lifecycle.preStop.sleep)`);
    else if (grace <= preStop + DRAIN_SECONDS) {
      failures.push(
        `${name}: terminationGracePeriodSeconds ${grace} must exceed preStop ${preStop} s + drain ${DRAIN_SECONDS} s`,
      );
    }
  }
  const main = pod.containers?.[0];
  const waits = (pod.initContainers ?? []).filter(
    (container) => container.args?.[0] === 'migrate' && container.args?.[1] === '--wait',
  );
  if (waits.length === 0) failures.push(`${id(object)}: no initContainer running ["migrate", "--wait", ...]`);
  for (const wait of waits) {
    if (wait.image !== main?.image)
      failures.push(`${id(object)}: initContainer ${wait.name} runs ${wait.image}, not ${main?.image}`);
  }
  const annotations = object.spec.template.metadata?.annotations ?? {};
  const ports = (main?.ports ?? []).map((port) => String(port.containerPort));
  if (annotations['prometheus.io/scrape'] !== 'true' || !ports.includes(annotations['prometheus.io/port'])) {
    failures.push(
      `${id(object)}: pod template needs prometheus.io/scrape "true" and prometheus.io/port of its container port`,
    );
  }
  return failures;
}

/** Does an Ingress path route the request path `requested`? Conservative for ImplementationSpecific. */
function routes(ingressPath, requested) {
  const value = ingressPath.path ?? '/';
  if (ingressPath.pathType === 'Exact') return value === requested;
  if (ingressPath.pathType !== 'Prefix' && /[\\^$*+?()[\]{}|]/.test(value)) return true; // a regex: assume it may
  if (value === '/') return true;
  const prefix = value.replace(/\/+$/, '');
  return (
    requested === prefix ||
    requested.startsWith(`${prefix}/`) ||
    (ingressPath.pathType !== 'Prefix' && requested.startsWith(prefix))
  );
}

function componentOfService(objects, serviceName) {
  const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === serviceName);
  return service?.spec?.selector?.['app.kubernetes.io/component'];
}

/** A request of each kind the SDKs send to their one host (libs/capture-server's routes). */
const SDK_PATHS = [
  '/e/',
  '/i/v0/e/',
  '/batch/',
  '/capture/',
  '/track/',
  '/engage/',
  '/flags/',
  '/decide/',
  '/flags/definitions',
  '/api/feature_flag/local_evaluation',
  '/array/phc_token/config.js',
  '/site_app/1/web-token/hash/',
  '/s/',
  '/static/array.js',
];

export function checkIngresses(objects) {
  const failures = [];
  const hostsByComponent = new Map();
  const rules = [];
  for (const ingress of objects.filter((object) => object.kind === 'Ingress')) {
    if (ingress.spec.defaultBackend)
      failures.push(`${id(ingress)}: has a defaultBackend (every host would route everything)`);
    for (const rule of ingress.spec.rules ?? []) {
      if (!rule.host) failures.push(`${id(ingress)}: a rule without a host`);
      for (const ingressPath of rule.http?.paths ?? []) {
        const component = componentOfService(objects, ingressPath.backend?.service?.name);
        rules.push({ ingress, host: rule.host, ingressPath, component });
        if (!hostsByComponent.has(component)) hostsByComponent.set(component, new Set());
        hostsByComponent.get(component).add(rule.host);
      }
    }
  }
  const captureHosts = hostsByComponent.get('capture') ?? new Set();
  const managementHosts = hostsByComponent.get('management') ?? new Set();
  if (captureHosts.size === 0) failures.push('no Ingress routes to the capture Service');
  if (managementHosts.size === 0) failures.push('no Ingress routes to the management Service');
  for (const host of captureHosts) {
    for (const requested of SDK_PATHS) {
      const routed = rules.some(
        (rule) => rule.host === host && rule.component === 'capture' && routes(rule.ingressPath, requested),
      );
      if (!routed) failures.push(`capture host ${host} does not route ${requested}, which the SDKs call`);
    }
    if (managementHosts.has(host))
      failures.push(`host ${host} routes to both capture and management: the capture host must be its own`);
    for (const { ingress, host: ruleHost, ingressPath } of rules) {
      if (ruleHost !== host) continue;
      for (const requested of ['/api', '/api/projects/']) {
        if (routes(ingressPath, requested)) {
          failures.push(
            `${id(ingress)}: capture host ${host} routes ${requested} (path ${ingressPath.path} ${ingressPath.pathType})`,
          );
          break;
        }
      }
    }
  }
  for (const { ingress, host, ingressPath, component } of rules) {
    if (!component) failures.push(`${id(ingress)}: ${host}${ingressPath.path} routes to an unknown Service`);
    if (routes(ingressPath, '/metrics'))
      failures.push(`${id(ingress)}: ${host} exposes /metrics (path ${ingressPath.path})`);
  }
  return failures;
}

function configValue(objects, pod, key) {
  for (const container of pod.containers ?? []) {
    const literal = (container.env ?? []).find((env) => env.name === key && env.value !== undefined);
    if (literal) return literal.value;
    for (const source of container.envFrom ?? []) {
      const name = source.configMapRef?.name;
      const configMap = objects.find(
        (object) => object.kind === 'ConfigMap' && object.metadata.name === name,
      );
      if (configMap?.data?.[key] !== undefined) return configMap.data[key];
    }
  }
  return undefined;
}

function deploymentOf(objects, component) {
  return objects.find(
    (object) =>
      object.kind === 'Deployment' &&
      object.spec.template.metadata?.labels?.['app.kubernetes.io/component'] === component,
  );
}

function hpaFor(objects, deployment) {
  return objects.find(
    (object) =>
      object.kind === 'HorizontalPodAutoscaler' &&
      object.spec.scaleTargetRef?.kind === 'Deployment' &&
      object.spec.scaleTargetRef?.name === deployment.metadata.name,
  );
}

export function checkScaling(objects, target) {
  const failures = [];
  const ingestion = deploymentOf(objects, 'ingestion');
  const capture = deploymentOf(objects, 'capture');
  if (!ingestion || !capture) return ['the ingestion or capture Deployment is missing'];
  const raw = configValue(objects, ingestion.spec.template.spec, 'KAFKA_TOPIC_PARTITIONS');
  const partitions = raw === undefined ? DEFAULT_TOPIC_PARTITIONS : Number(raw);
  if (!Number.isInteger(partitions) || partitions < 1)
    failures.push(`KAFKA_TOPIC_PARTITIONS=${raw} is not a positive integer`);
  const ingestionHpa = hpaFor(objects, ingestion);
  if (ingestionHpa && ingestionHpa.spec.maxReplicas > partitions) {
    failures.push(
      `${id(ingestionHpa)}: maxReplicas ${ingestionHpa.spec.maxReplicas} exceeds KAFKA_TOPIC_PARTITIONS ${partitions}`,
    );
  }
  if ((ingestion.spec.replicas ?? 1) > partitions)
    failures.push(`${id(ingestion)}: replicas exceed KAFKA_TOPIC_PARTITIONS ${partitions}`);
  const captureHpa = hpaFor(objects, capture);
  if (captureHpa) {
    const onCpu = (captureHpa.spec.metrics ?? []).some(
      (metric) => metric.type === 'Resource' && metric.resource?.name === 'cpu',
    );
    if (!onCpu) failures.push(`${id(captureHpa)}: capture must scale on CPU`);
  }
  if (target.autoscaled) {
    if (!captureHpa) failures.push('capture has no HorizontalPodAutoscaler');
    if (!ingestionHpa) failures.push('ingestion has no HorizontalPodAutoscaler');
  }
  for (const hpa of [captureHpa, ingestionHpa].filter(Boolean)) {
    if ((hpa.spec.minReplicas ?? 1) > hpa.spec.maxReplicas)
      failures.push(`${id(hpa)}: minReplicas exceeds maxReplicas`);
  }
  return failures;
}

export function checkCoverage(objects) {
  const failures = [];
  const pdbs = objects.filter((object) => object.kind === 'PodDisruptionBudget');
  const policies = objects.filter((object) => object.kind === 'NetworkPolicy');
  const services = objects.filter((object) => object.kind === 'Service');
  const workloads = objects.filter((object) => object.kind === 'Deployment' || object.kind === 'Job');
  for (const workload of workloads) {
    const labels = workload.spec.template.metadata?.labels ?? {};
    const selecting = policies.filter((policy) => matchesSelector(policy.spec.podSelector, labels));
    const types = (policy) =>
      policy.spec.policyTypes ?? (policy.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);
    const denyAll = selecting.some(
      (policy) =>
        types(policy).includes('Ingress') &&
        types(policy).includes('Egress') &&
        !policy.spec.ingress?.length &&
        !policy.spec.egress?.length,
    );
    if (!denyAll)
      failures.push(
        `${id(workload)}: no default-deny NetworkPolicy (Ingress and Egress, no rules) selects its pods`,
      );
    if (workload.kind !== 'Deployment') continue;
    const ports = (workload.spec.template.spec.containers ?? []).flatMap(
      (container) => container.ports ?? [],
    );
    for (const port of ports) {
      const allowed = selecting.some((policy) =>
        (policy.spec.ingress ?? []).some((rule) =>
          (rule.ports ?? []).some(
            (allowedPort) => allowedPort.port === port.containerPort || allowedPort.port === port.name,
          ),
        ),
      );
      if (!allowed)
        failures.push(
          `${id(workload)}: no NetworkPolicy lets anything (Prometheus) reach port ${port.containerPort}`,
        );
    }
    const budgets = pdbs.filter((pdb) => matchesSelector(pdb.spec.selector, labels));
    if (budgets.length === 0) failures.push(`${id(workload)}: no PodDisruptionBudget selects its pods`);
    const hpa = hpaFor(objects, workload);
    const minimum = hpa ? (hpa.spec.minReplicas ?? 1) : (workload.spec.replicas ?? 1);
    for (const pdb of budgets) {
      if (typeof pdb.spec.minAvailable === 'number' && pdb.spec.minAvailable >= minimum) {
        failures.push(
          `${id(pdb)}: minAvailable ${pdb.spec.minAvailable} with ${minimum} replica(s) blocks every node drain`,
        );
      }
    }
    if (!services.some((service) => matchesSelector({ matchLabels: service.spec.selector }, labels))) {
      failures.push(`${id(workload)}: no Service selects its pods`);
    }
  }
  return failures;
}

export function checkObjects(objects, target) {
  const failures = [];
  for (const object of objects) {
    if (
      object.kind === 'Secret' &&
      (Object.keys(object.data ?? {}).length || Object.keys(object.stringData ?? {}).length)
    ) {
      failures.push(`${id(object)}: a Secret with values (secrets are referenced, never shipped)`);
    }
    if (object.kind === 'ConfigMap') {
      const leaked = SECRET_KEYS.filter((key) => Object.hasOwn(object.data ?? {}, key));
      if (leaked.length)
        failures.push(
          `${id(object)}: holds secret settings ${leaked.join(', ')} (they belong in hogbase-secrets)`,
        );
    }
    if (
      object.kind === 'Namespace' &&
      object.metadata.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted'
    ) {
      failures.push(`${id(object)}: needs label pod-security.kubernetes.io/enforce: restricted`);
    }
    if (podTemplate(object)) failures.push(...checkRestricted(object));
    if (object.kind === 'Deployment') failures.push(...checkDeployment(object));
  }
  const jobs = objects.filter((object) => object.kind === 'Job');
  const migrateJobs = jobs.filter((job) => job.spec.template.spec.containers?.[0]?.args?.[0] === 'migrate');
  if (migrateJobs.length !== 1) failures.push(`expected one migrate Job, found ${migrateJobs.length}`);
  for (const job of migrateJobs) {
    const tag = job.spec.template.spec.containers[0].image?.split(':')[1];
    if (target.versioned && !job.metadata.name.endsWith(`-${tag}`)) {
      failures.push(
        `${id(job)}: runs image tag ${tag}; name it hogbase-migrate-${tag} (a Job's template is immutable: a new version needs a new Job)`,
      );
    }
  }
  for (const monitor of objects.filter((object) => object.kind === 'ServiceMonitor')) {
    const services = objects.filter(
      (object) =>
        object.kind === 'Service' && matchesSelector(monitor.spec?.selector, object.metadata.labels),
    );
    if (services.length === 0) failures.push(`${id(monitor)}: selects no Service`);
    for (const endpoint of monitor.spec?.endpoints ?? []) {
      for (const service of services) {
        if (!(service.spec.ports ?? []).some((port) => port.name === endpoint.port)) {
          failures.push(`${id(monitor)}: ${id(service)} has no port named ${endpoint.port}`);
        }
      }
    }
  }
  failures.push(...checkIngresses(objects), ...checkScaling(objects, target), ...checkCoverage(objects));
  return failures;
}

// ---------------------------------------------------------------------------------------------

/** `k8sDir`: another copy of k8s/ (the checks' own tests break a copy to see them fail). */
export async function checkManifests({
  log = (line) => console.log(line),
  targets = TARGETS,
  k8sDir = K8S_DIR,
} = {}) {
  await ensureKubectl(log);
  const { validator, python } = await ensureValidator(log);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'hogbase-manifests-'));
  const failures = [];
  const summary = {};
  try {
    for (const target of targets) {
      const prefix = `[${target.name}]`;
      let yamlText;
      try {
        yamlText = await render(target, workDir, k8sDir);
      } catch (error) {
        failures.push(`${prefix} ${error.message}`);
        continue;
      }
      const file = path.join(workDir, `${target.name}.yaml`);
      await writeFile(file, yamlText);
      const objects = await parseYaml(python, file);
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

// ---------------------------------------------------------------------------------------------
// Self-test: a check that cannot fail is a defect. Each mutation breaks a copy of k8s/ in one way
// and must make the named target fail with the expected message.

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

/** Returns the mutations the checks failed to catch (empty: every check can fail). */
export async function selfTestManifests({ log = (line) => console.log(line) } = {}) {
  const escaped = [];
  for (const mutation of MUTATIONS) {
    const copy = await mkdtemp(path.join(os.tmpdir(), 'hogbase-k8s-mutant-'));
    try {
      await cp(K8S_DIR, copy, { recursive: true });
      const file = path.join(copy, mutation.file);
      if (mutation.append) {
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
      const change = mutation.append
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
    console.error(`check-manifests: ${error.message}`);
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

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();

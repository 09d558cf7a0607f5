// @ts-check
// Our own rules over the rendered objects: PSS "restricted", probes, resources, drain, no secret values,
// capture's host never routes /api, bounded ingestion, PDBs and NetworkPolicies. Each returns failures.

/** The image's drain budget after SIGTERM: capture's Kafka ack, workers' 8 s hand-back. */
const DRAIN_SECONDS = 15;
const EXPECTED_USER = 10001;
const SECRET_KEYS = ['DATABASE_URL', 'ENCRYPTION_KEYS', 'CLICKHOUSE_PASSWORD', 'SMTP_URL'];
const DEFAULT_TOPIC_PARTITIONS = 8;
const WRITABLE_PATHS = ['/data', '/tmp'];
/**
 * @typedef {import('./kubernetes.types.d.ts').Manifest} Manifest
 * @typedef {import('./kubernetes.types.d.ts').ManifestTarget} ManifestTarget
 * @typedef {import('./kubernetes.types.d.ts').Container} Container
 * @typedef {import('./kubernetes.types.d.ts').PodSpec} PodSpec
 */

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

const id = (/** @type {Manifest} */ object) => `${object.kind}/${object.metadata?.name}`;

/**
 * @param {import('./kubernetes.types.d.ts').LabelSelector | undefined} selector
 * @param {Record<string, string>} [labels]
 */
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

/**
 * @param {Manifest} object
 * @returns {import('./kubernetes.types.d.ts').PodTemplate | undefined}
 */
function podTemplate(object) {
  if (object.kind === 'CronJob') return object.spec?.jobTemplate?.spec?.template;
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(object.kind))
    return object.spec?.template;
  if (object.kind === 'Pod') return object;
  return undefined;
}

/** @param {PodSpec} pod */
function allContainers(pod) {
  return [
    ...(pod.initContainers ?? []).map((container) => ({ container, init: true })),
    ...(pod.containers ?? []).map((container) => ({ container, init: false })),
    ...(pod.ephemeralContainers ?? []).map((container) => ({ container, init: true })),
  ];
}

/**
 * Pod Security Standard "restricted" (v1.31 rules), plus our image's uid and read-only root.
 * @param {Manifest} object
 */
export function checkRestricted(object) {
  const failures = [];
  const where = id(object);
  const pod = podTemplate(object)?.spec;
  if (!pod) return [`${where}: no pod template`];
  const podContext = pod.securityContext ?? {};
  for (const field of /** @type {const} */ (['hostNetwork', 'hostPID', 'hostIPC']))
    if (pod[field]) failures.push(`${where}: ${field} is set`);
  if (podContext.sysctls?.length) failures.push(`${where}: sysctls are set`);
  /** @type {Map<string, NonNullable<PodSpec['volumes']>[number]>} */
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
    for (const kind of /** @type {const} */ (['requests', 'limits'])) {
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
      (container.image ?? '').endsWith(':latest')
    ) {
      failures.push(`${name}: image ${container.image} is not hogbase/hogbase:<version>`);
    }
  }
  return failures;
}

/**
 * @param {import('./kubernetes.types.d.ts').Probe | undefined} probe
 * @param {string} path
 * @param {Container} container
 */
function probeOn(probe, path, container) {
  const get = probe?.httpGet;
  if (!get) return false;
  if (get.path !== path) return false;
  return (container.ports ?? []).some((port) => port.name === get.port || port.containerPort === get.port);
}

/** @param {Container} container */
function preStopSeconds(container) {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep?.seconds !== undefined) return preStop.sleep.seconds;
  const command = preStop?.exec?.command ?? [];
  const sleep = command.join(' ').match(/sleep\s+(\d+)/);
  return sleep ? Number(sleep[1]) : undefined;
}

/** @param {Manifest} object */
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

/**
 * Conservative for ImplementationSpecific.
 * @param {import('./kubernetes.types.d.ts').IngressPath} ingressPath
 * @param {string} requested
 */
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

/**
 * @param {Manifest[]} objects
 * @param {string | undefined} serviceName
 */
function componentOfService(objects, serviceName) {
  const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === serviceName);
  return /** @type {string | undefined} */ (service?.spec?.selector?.['app.kubernetes.io/component']);
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

/** @param {Manifest[]} objects */
export function checkIngresses(objects) {
  const failures = [];
  /** @type {Map<string | undefined, Set<string | undefined>>} */
  const hostsByComponent = new Map();
  /**
   * @type {{ ingress: Manifest, host: string | undefined, component: string | undefined,
   *   ingressPath: import('./kubernetes.types.d.ts').IngressPath }[]}
   */
  const rules = [];
  for (const ingress of objects.filter((object) => object.kind === 'Ingress')) {
    if (ingress.spec.defaultBackend)
      failures.push(`${id(ingress)}: has a defaultBackend (every host would route everything)`);
    for (const rule of ingress.spec.rules ?? []) {
      if (!rule.host) failures.push(`${id(ingress)}: a rule without a host`);
      for (const ingressPath of rule.http?.paths ?? []) {
        const component = componentOfService(objects, ingressPath.backend?.service?.name);
        rules.push({ ingress, host: rule.host, ingressPath, component });
        const hosts = hostsByComponent.get(component) ?? new Set();
        hostsByComponent.set(component, hosts);
        hosts.add(rule.host);
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

/**
 * @param {Manifest[]} objects
 * @param {PodSpec} pod
 * @param {string} key
 */
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

/**
 * @param {Manifest[]} objects
 * @param {string} component
 */
function deploymentOf(objects, component) {
  return objects.find(
    (object) =>
      object.kind === 'Deployment' &&
      object.spec.template.metadata?.labels?.['app.kubernetes.io/component'] === component,
  );
}

/**
 * @param {Manifest[]} objects
 * @param {Manifest} deployment
 */
function hpaFor(objects, deployment) {
  return objects.find(
    (object) =>
      object.kind === 'HorizontalPodAutoscaler' &&
      object.spec.scaleTargetRef?.kind === 'Deployment' &&
      object.spec.scaleTargetRef?.name === deployment.metadata.name,
  );
}

/**
 * @param {Manifest[]} objects
 * @param {ManifestTarget} target
 */
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
  for (const hpa of [captureHpa, ingestionHpa].filter((hpa) => hpa !== undefined)) {
    if ((hpa.spec.minReplicas ?? 1) > hpa.spec.maxReplicas)
      failures.push(`${id(hpa)}: minReplicas exceeds maxReplicas`);
  }
  return failures;
}

/** @param {Manifest[]} objects */
export function checkCoverage(objects) {
  const failures = [];
  const pdbs = objects.filter((object) => object.kind === 'PodDisruptionBudget');
  const policies = objects.filter((object) => object.kind === 'NetworkPolicy');
  const services = objects.filter((object) => object.kind === 'Service');
  const workloads = objects.filter((object) => object.kind === 'Deployment' || object.kind === 'Job');
  for (const workload of workloads) {
    const labels = workload.spec.template.metadata?.labels ?? {};
    const selecting = policies.filter((policy) => matchesSelector(policy.spec.podSelector, labels));
    const types = (/** @type {Manifest} */ policy) =>
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

/**
 * @param {Manifest[]} objects
 * @param {ManifestTarget} target
 */
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

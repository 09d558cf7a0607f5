// The parts of rendered Kubernetes objects that manifest-rules.mjs reads. Every kind shares one
// `Spec` (the rules tell kinds apart by `kind`); a field read without `?.` is one the strict schema
// validation guarantees for the kinds whose rules read it.

export interface ObjectMeta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A Service's `selector` is a plain map; the others' are label selectors. */
export interface LabelSelector {
  matchLabels?: Record<string, unknown>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export interface Probe {
  httpGet?: { path?: string; port?: string | number };
}

export interface SecurityContext {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  runAsNonRoot?: boolean;
  runAsUser?: number;
  seccompProfile?: { type?: string };
  procMount?: string;
  seLinuxOptions?: { type?: string };
  readOnlyRootFilesystem?: boolean;
  sysctls?: unknown[];
}

export interface Container {
  name: string;
  image?: string;
  args?: string[];
  ports?: { name?: string; containerPort: number; hostPort?: number }[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name?: string } }[];
  securityContext?: SecurityContext;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  volumeMounts?: { name: string; mountPath: string }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds?: number }; exec?: { command?: string[] } } };
}

export interface PodSpec {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: SecurityContext;
  volumes?: ({ name: string } & Record<string, unknown>)[];
  containers: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  terminationGracePeriodSeconds?: number;
}

export interface PodTemplate {
  metadata?: Partial<ObjectMeta>;
  spec: PodSpec;
}

export interface IngressPath {
  path?: string;
  pathType?: string;
  backend?: { service?: { name?: string } };
}

export interface Spec extends PodSpec {
  // Workloads
  template: PodTemplate;
  jobTemplate?: { spec?: { template?: PodTemplate } };
  replicas?: number;
  // Service, PodDisruptionBudget, ServiceMonitor
  selector?: LabelSelector & Record<string, unknown>;
  ports?: { name?: string; port?: number }[];
  minAvailable?: number | string;
  endpoints?: { port?: string }[];
  // NetworkPolicy
  podSelector?: LabelSelector;
  policyTypes?: string[];
  ingress?: { ports?: { port?: number | string }[] }[];
  egress?: unknown[];
  // Ingress
  defaultBackend?: unknown;
  rules?: { host?: string; http?: { paths?: IngressPath[] } }[];
  // HorizontalPodAutoscaler
  scaleTargetRef?: { kind?: string; name?: string };
  minReplicas?: number;
  maxReplicas: number;
  metrics?: { type?: string; resource?: { name?: string } }[];
}

export interface Manifest {
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/**
 * What to render. `components` are added over `dir` in a temporary kustomization; `versioned`:
 * the migrate Job must carry the image tag in its name; `autoscaled`: capture and ingestion
 * must have HPAs.
 */
export interface ManifestTarget {
  name: string;
  dir: string;
  components?: string[];
  versioned: boolean;
  autoscaled: boolean;
}

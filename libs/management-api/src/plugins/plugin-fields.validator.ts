import { ValidateBy } from 'class-validator';
import { PLUGIN_METHOD_NAMES } from '@hogbase/apps-sandbox';

/** What the installer's inspection files under `scheduled_tasks` rather than `methods` (apps-install). */
const SCHEDULED_TASKS: readonly string[] = ['runEveryMinute', 'runEveryHour', 'runEveryDay'];
const METHODS: readonly string[] = PLUGIN_METHOD_NAMES.filter((name) => !SCHEDULED_TASKS.includes(name));
const METRIC_KINDS: readonly string[] = ['sum', 'max', 'min'];
/** plugin.json's config field types (apps-install's plugin-json.validator). */
const CONFIG_FIELD_TYPES: readonly string[] = ['string', 'attachment', 'choice', 'json'];
const MAX_ENTRIES = 100;
const MAX_CONFIG_FIELDS = 200;
const MAX_NAME = 200;

type Problem = string | null;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nameProblem(what: string, name: string): Problem {
  return name === '' || name.length > MAX_NAME ? `${what} names have 1 to ${MAX_NAME} characters.` : null;
}

function listProblem(key: string, value: unknown, allowed: readonly string[] | null): Problem {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    return `"${key}" must be a list of names.`;
  }
  if (value.length > MAX_ENTRIES) return `"${key}" lists at most ${MAX_ENTRIES} names.`;
  for (const item of value as string[]) {
    if (allowed && !allowed.includes(item)) {
      return `"${item}" is not one of the ${key} an app can export: ${allowed.join(', ')}.`;
    }
    if (!allowed) {
      const problem = nameProblem('Job', item);
      if (problem) return problem;
    }
  }
  return null;
}

/** What each capability lists: the names the installer's inspection can find (null: any job name). */
const CAPABILITY_NAMES: Record<string, readonly string[] | null> = {
  methods: METHODS,
  jobs: null,
  scheduled_tasks: SCHEDULED_TASKS,
};

/** `{methods?, jobs?, scheduled_tasks?}`, as the installer's inspection records them. */
export function capabilitiesProblem(value: unknown): Problem {
  if (!isRecord(value)) return 'Expected a dictionary of items.';
  for (const [key, entry] of Object.entries(value)) {
    const problem = Object.hasOwn(CAPABILITY_NAMES, key)
      ? listProblem(key, entry, CAPABILITY_NAMES[key])
      : `"${key}" is not a capability: capabilities hold methods, jobs and scheduled_tasks.`;
    if (problem) return problem;
  }
  return null;
}

/** `{name: "sum" | "max" | "min"}`, the app's `metrics` export. */
export function metricsProblem(value: unknown): Problem {
  if (!isRecord(value)) return 'Expected a dictionary of items.';
  const entries = Object.entries(value);
  if (entries.length > MAX_ENTRIES) return `At most ${MAX_ENTRIES} metrics.`;
  for (const [name, kind] of entries) {
    const problem = nameProblem('Metric', name);
    if (problem) return problem;
    if (typeof kind !== 'string' || !METRIC_KINDS.includes(kind)) {
      return `Metric "${name}" must be one of ${METRIC_KINDS.join(', ')}.`;
    }
  }
  return null;
}

/** `{jobName: {payload: …}}`, plugin.json's `publicJobs`. */
export function publicJobsProblem(value: unknown): Problem {
  if (!isRecord(value)) return 'Expected a dictionary of items.';
  const entries = Object.entries(value);
  if (entries.length > MAX_ENTRIES) return `At most ${MAX_ENTRIES} public jobs.`;
  for (const [name, job] of entries) {
    const problem = nameProblem('Job', name);
    if (problem) return problem;
    if (!isRecord(job)) return `Public job "${name}" must be an object.`;
  }
  return null;
}

/** plugin.json's `config`, checked as the installer checks it (apps-install's plugin-json.validator). */
export function configSchemaProblem(value: unknown): Problem {
  if (!Array.isArray(value)) return 'Expected a list of items.';
  if (value.length > MAX_CONFIG_FIELDS) return `At most ${MAX_CONFIG_FIELDS} config fields.`;
  for (const [index, field] of value.entries()) {
    const where = `Config field ${index + 1}`;
    if (!isRecord(field)) return `${where} must be an object.`;
    if (field.key !== undefined && (typeof field.key !== 'string' || field.key === '')) {
      return `${where}: "key" must be a non-empty string.`;
    }
    if (field.key === undefined && typeof field.markdown !== 'string') return `${where} has no "key".`;
    if (field.type !== undefined && !CONFIG_FIELD_TYPES.includes(field.type as string)) {
      return `${where}: "type" must be one of ${CONFIG_FIELD_TYPES.join(', ')}.`;
    }
    if (
      field.choices !== undefined &&
      (!Array.isArray(field.choices) || field.choices.some((choice) => typeof choice !== 'string'))
    ) {
      return `${where}: "choices" must be a list of strings.`;
    }
  }
  return null;
}

/** A class-validator constraint whose message says what is wrong with the value. */
export function ValidShape(name: string, problem: (value: unknown) => Problem): PropertyDecorator {
  return ValidateBy(
    { name, validator: { validate: (value: unknown) => problem(value) === null } },
    { message: (args) => problem(args.value) ?? 'Invalid value.' },
  );
}

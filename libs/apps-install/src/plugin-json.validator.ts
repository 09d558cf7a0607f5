import { AppInstallError } from './app-install.error';
import type {
  AppConfigField,
  AppConfigFieldType,
  AppFiles,
  AppPublicJob,
  PluginJson,
} from './app-install.types';

export const MISSING_PLUGIN_JSON_MESSAGE = 'Could not find plugin.json in the plugin';
export const STATELESS_WITH_CONFIG_MESSAGE = 'Stateless plugins cannot have a config!';

const CONFIG_FIELD_TYPES: readonly AppConfigFieldType[] = ['string', 'attachment', 'choice', 'json'];

export interface ReadPluginJsonOptions {
  /** When plugin.json has no `name`. */
  defaultName?: string | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function optionalString(json: Record<string, unknown>, key: string): string | null {
  const value = json[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new AppInstallError(`plugin.json: "${key}" must be a string`);
  return value;
}

/** As PostHog does, with its error texts where it has them. */
export function readPluginJson(files: AppFiles, options: ReadPluginJsonOptions = {}): PluginJson {
  const source = files['plugin.json'];
  if (source === undefined) throw new AppInstallError(MISSING_PLUGIN_JSON_MESSAGE);
  if (typeof source !== 'string') throw new AppInstallError('plugin.json is not a text file');
  let raw: unknown;
  try {
    raw = JSON.parse(source);
  } catch (error) {
    throw new AppInstallError(`Could not parse plugin.json: ${(error as Error).message}`);
  }
  if (!isRecord(raw)) throw new AppInstallError('plugin.json must hold a JSON object');

  const name = optionalString(raw, 'name') ?? options.defaultName ?? null;
  if (name === null || name.trim() === '') throw new AppInstallError('plugin.json has no "name"');

  const configSchema = readConfigSchema(raw.config);
  if (raw.stateless !== undefined && typeof raw.stateless !== 'boolean') {
    throw new AppInstallError('plugin.json: "stateless" must be true or false');
  }
  const isStateless = raw.stateless === true;
  if (isStateless && configSchema.length > 0) throw new AppInstallError(STATELESS_WITH_CONFIG_MESSAGE);

  return {
    name,
    description: optionalString(raw, 'description'),
    url: optionalString(raw, 'url'),
    icon: optionalString(raw, 'icon'),
    configSchema,
    publicJobs: readPublicJobs(raw.publicJobs),
    isStateless,
    main: readMain(raw, files),
    raw,
  };
}

function readConfigSchema(config: unknown): AppConfigField[] {
  if (config === undefined || config === null) return [];
  if (!Array.isArray(config) && !isRecord(config)) {
    throw new AppInstallError('plugin.json: "config" must be an array of fields');
  }
  // PostHog also accepts `{key: field}` and keeps the object's order as `order`.
  const fields: unknown[] = Array.isArray(config)
    ? config
    : Object.entries(config).map(([key, field], order) =>
        isRecord(field) ? { key, ...field, order } : field,
      );
  return fields.map((field, index) => {
    const where = `plugin.json: config field ${index + 1}`;
    if (!isRecord(field)) throw new AppInstallError(`${where} must be an object`);
    if (field.key !== undefined && (typeof field.key !== 'string' || field.key === '')) {
      throw new AppInstallError(`${where}: "key" must be a non-empty string`);
    }
    if (field.key === undefined && typeof field.markdown !== 'string') {
      throw new AppInstallError(`${where} has no "key"`);
    }
    if (field.type !== undefined && !CONFIG_FIELD_TYPES.includes(field.type as AppConfigFieldType)) {
      throw new AppInstallError(`${where}: "type" must be one of ${CONFIG_FIELD_TYPES.join(', ')}`);
    }
    if (
      field.choices !== undefined &&
      (!Array.isArray(field.choices) || field.choices.some((choice) => typeof choice !== 'string'))
    ) {
      throw new AppInstallError(`${where}: "choices" must be an array of strings`);
    }
    return field;
  });
}

function readPublicJobs(publicJobs: unknown): Record<string, AppPublicJob> {
  if (publicJobs === undefined || publicJobs === null) return {};
  if (!isRecord(publicJobs) || Object.values(publicJobs).some((job) => !isRecord(job))) {
    throw new AppInstallError('plugin.json: "publicJobs" must map job names to objects');
  }
  return publicJobs as Record<string, AppPublicJob>;
}

function readMain(raw: Record<string, unknown>, files: AppFiles): string | null {
  if (raw.main !== undefined && raw.main !== null) {
    if (typeof raw.main !== 'string' || raw.main.trim() === '') {
      throw new AppInstallError('plugin.json: "main" must be a file name');
    }
    const main = raw.main.replace(/^(\.\/)+/, '');
    if (files[main] === undefined)
      throw new AppInstallError(`Could not find the main file ${main} in the plugin`);
    return main;
  }
  if (files['index.js'] !== undefined) return 'index.js';
  if (files['index.ts'] !== undefined) return 'index.ts';
  return null;
}

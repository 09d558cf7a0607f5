import type { Plugin } from '@hogbase/postgres';

/** The collections PostHog serves apps under, one resource shape, filtered by capabilities. */
export const PIPELINE_COLLECTIONS = [
  'pipeline_transformations',
  'pipeline_destinations',
  'pipeline_frontend_apps',
  'pipeline_import_apps',
] as const;
export type PipelineCollection = (typeof PIPELINE_COLLECTIONS)[number];

const DELIVERY_METHODS = ['onEvent', 'composeWebhook'];

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * PostHog's filters (posthog/api/plugin.py, its Pipeline*ViewSets): transformations have
 * processEvent; destinations deliver events (onEvent or composeWebhook), so an app doing both is
 * in both; frontend apps have neither methods nor scheduled tasks (site apps have `{}`); import
 * apps run on a schedule, or have methods that neither deliver nor transform.
 */
export function belongsTo(collection: PipelineCollection, plugin: Pick<Plugin, 'capabilities'>): boolean {
  const capabilities = plugin.capabilities ?? {};
  const hasMethods = Object.hasOwn(capabilities, 'methods');
  const methods = stringList(capabilities.methods);
  switch (collection) {
    case 'pipeline_transformations':
      return hasMethods && methods.includes('processEvent');
    case 'pipeline_destinations':
      return hasMethods && methods.some((method) => DELIVERY_METHODS.includes(method));
    case 'pipeline_frontend_apps':
      return !hasMethods && !Object.hasOwn(capabilities, 'scheduled_tasks');
    case 'pipeline_import_apps':
      return (
        stringList(capabilities.scheduled_tasks).length > 0 ||
        (hasMethods && !methods.some((method) => [...DELIVERY_METHODS, 'processEvent'].includes(method)))
      );
  }
}

/** The same filters in SQL over `plugin.capabilities` (constant text: nothing from the request). */
export function collectionCondition(collection: PipelineCollection, alias: string): string {
  const capabilities = `${alias}.capabilities`;
  const hasMethod = (method: string) => `${capabilities} -> 'methods' @> '["${method}"]'::jsonb`;
  switch (collection) {
    case 'pipeline_transformations':
      return `(${hasMethod('processEvent')})`;
    case 'pipeline_destinations':
      return `(${hasMethod('onEvent')} OR ${hasMethod('composeWebhook')})`;
    case 'pipeline_frontend_apps':
      return `(NOT jsonb_exists(${capabilities}, 'methods') AND NOT jsonb_exists(${capabilities}, 'scheduled_tasks'))`;
    case 'pipeline_import_apps':
      return `((jsonb_typeof(${capabilities} -> 'scheduled_tasks') = 'array' AND jsonb_array_length(${capabilities} -> 'scheduled_tasks') > 0)
        OR (jsonb_exists(${capabilities}, 'methods') AND NOT ${hasMethod('onEvent')} AND NOT ${hasMethod('composeWebhook')} AND NOT ${hasMethod('processEvent')}))`;
  }
}

/** Which collection a request's path names (`/api/organizations/:id/<collection>/…`). */
export function collectionOfPath(path: string): PipelineCollection {
  const collection = PIPELINE_COLLECTIONS.find((name) => path.split('/').includes(name));
  if (!collection) throw new Error(`no pipeline collection in ${path}`);
  return collection;
}

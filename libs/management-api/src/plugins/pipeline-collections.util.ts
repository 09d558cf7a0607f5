/** The collections PostHog serves apps under, one resource shape, filtered by capabilities. */
export const PIPELINE_COLLECTIONS = [
  'pipeline_transformations',
  'pipeline_destinations',
  'pipeline_frontend_apps',
  'pipeline_import_apps',
] as const;
export type PipelineCollection = (typeof PIPELINE_COLLECTIONS)[number];

/**
 * PostHog's Pipeline*ViewSets filters (posthog/api/plugin.py) over the app's capabilities. Beyond
 * PostHog, an app stays in the collection it was created through, so a client finds it there again.
 */
export function collectionCondition(collection: PipelineCollection, alias: string): string {
  const capabilities = `COALESCE(${alias}.declared_capabilities, ${alias}.capabilities)`;
  const hasMethod = (method: string) => `${capabilities} -> 'methods' @> '["${method}"]'::jsonb`;
  const createdThrough = `${alias}.created_through = :createdThrough`;
  switch (collection) {
    case 'pipeline_transformations':
      return `(${createdThrough} OR ${hasMethod('processEvent')})`;
    case 'pipeline_destinations':
      return `(${createdThrough} OR ${hasMethod('onEvent')} OR ${hasMethod('composeWebhook')})`;
    case 'pipeline_frontend_apps':
      return `(${createdThrough} OR (NOT jsonb_exists(${capabilities}, 'methods') AND NOT jsonb_exists(${capabilities}, 'scheduled_tasks')))`;
    case 'pipeline_import_apps':
      return `(${createdThrough} OR (jsonb_typeof(${capabilities} -> 'scheduled_tasks') = 'array' AND jsonb_array_length(${capabilities} -> 'scheduled_tasks') > 0)
        OR (jsonb_exists(${capabilities}, 'methods') AND NOT ${hasMethod('onEvent')} AND NOT ${hasMethod('composeWebhook')} AND NOT ${hasMethod('processEvent')}))`;
  }
}

export function collectionOfPath(path: string): PipelineCollection {
  const collection = PIPELINE_COLLECTIONS.find((name) => path.split('/').includes(name));
  if (!collection) throw new Error(`no pipeline collection in ${path}`);
  return collection;
}

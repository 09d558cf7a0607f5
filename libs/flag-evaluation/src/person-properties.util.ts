import type { Properties } from './flag-definition.types';

/**
 * The `$initial_*` copies the flags service fills in before ingestion writes them, so that
 * `$initial_browser` matches a brand-new person (`posthog/taxonomy/taxonomy.py`).
 */
const INITIAL_PROPERTY_SOURCES = [
  '$app_build',
  '$app_name',
  '$app_namespace',
  '$app_version',
  '$browser',
  '$browser_version',
  '$device_type',
  '$current_url',
  '$pathname',
  '$os',
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
  'gclid',
  'gad_source',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'twclid',
  'li_fat_id',
  'mc_cid',
  'igshid',
  'ttclid',
  'rdt_cid',
  'epik',
  'qclid',
  'sccid',
  'irclid',
  '_kx',
] as const;

/** The properties plus a `$initial_<name>` (`$initial_$browser` is `$initial_browser`) for each missing one. */
export function withInitialProperties(properties: Properties): Record<string, unknown> {
  const result: Record<string, unknown> = { ...properties };
  for (const source of INITIAL_PROPERTY_SOURCES) {
    if (result[source] === undefined) continue;
    const initialKey = source.startsWith('$') ? `$initial_${source.slice(1)}` : `$initial_${source}`;
    if (result[initialKey] === undefined) result[initialKey] = result[source];
  }
  return result;
}

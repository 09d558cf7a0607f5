import type { Properties } from '../persons/person-processing.types';

// Event properties PostHog copies onto the person: the latest value to `$set`, the first one to
// `$set_once` as `$initial_<name>` (nodejs/src/worker/ingestion/persons/person-property-utils.ts).
const EVENT_TO_PERSON_PROPERTIES = [
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
  '$os_name',
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
];
const CAMPAIGN_PROPERTIES = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_name',
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
  'irclid',
  '_kx',
  'epik',
  'qclid',
  'sccid',
];

const INITIAL_KEY_BY_PROPERTY = new Map(
  [...EVENT_TO_PERSON_PROPERTIES, ...CAMPAIGN_PROPERTIES].map((key) => [
    key,
    `$initial_${key.replace('$', '')}`,
  ]),
);

/** Events PostHog never derives person properties from. */
const EVENTS_WITHOUT_INITIAL_PROPERTIES = new Set(['$snapshot', '$performance_event']);

/** Changing alone, these do not make a non-person event write the person (they go with the next change). */
const FILTERED_PERSON_UPDATE_PROPERTIES = new Set([
  '$current_url',
  '$pathname',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$browser',
  '$browser_version',
  '$device_type',
  '$raw_user_agent',
  '$os',
  '$os_name',
  '$os_version',
  '$geoip_postal_code',
  '$geoip_time_zone',
  '$geoip_latitude',
  '$geoip_longitude',
  '$geoip_accuracy_radius',
  '$geoip_subdivision_1_code',
  '$geoip_subdivision_1_name',
  '$geoip_subdivision_2_code',
  '$geoip_subdivision_2_name',
  '$geoip_subdivision_3_code',
  '$geoip_subdivision_3_name',
  '$geoip_city_confidence',
  '$geoip_country_confidence',
  '$geoip_postal_code_confidence',
  '$geoip_subdivision_1_confidence',
  '$geoip_subdivision_2_confidence',
]);

export function isFilteredPersonUpdateProperty(key: string): boolean {
  return FILTERED_PERSON_UPDATE_PROPERTIES.has(key);
}

export function isPlainObject(value: unknown): value is Properties {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * PostHog's `personInitialAndUTMProperties`: an explicit `$set`/`$set_once` wins, a null is never an
 * `$initial_` value (it would block the real first touch), a server SDK's `$os` is not copied. Mutates.
 */
export function addInitialPersonProperties(eventName: string, properties: Properties): void {
  if (EVENTS_WITHOUT_INITIAL_PROPERTIES.has(eventName)) return;
  const skipServerHostOs = properties.$is_server === true;
  let set: Properties | undefined;
  let setOnce: Properties | undefined;

  for (const key in properties) {
    const initialKey = INITIAL_KEY_BY_PROPERTY.get(key);
    if (initialKey === undefined) continue;
    if (skipServerHostOs && (key === '$os' || key === '$os_name' || key === '$os_version')) continue;
    if (set === undefined || setOnce === undefined) {
      set = isPlainObject(properties.$set) ? properties.$set : {};
      setOnce = isPlainObject(properties.$set_once) ? properties.$set_once : {};
    }
    const value = properties[key];
    if (!(key in set)) set[key] = value;
    if (value !== null && value !== undefined && !(initialKey in setOnce)) setOnce[initialKey] = value;
  }
  if (set === undefined || setOnce === undefined) return;

  // `$os_name`, an alias of `$os` some SDKs send, only fills `$initial_os`.
  const osName = properties.$os_name;
  if (osName !== undefined && !skipServerHostOs) {
    if (osName !== null && !('$initial_os' in setOnce)) {
      setOnce.$initial_os = osName;
    }
    delete set.$os_name;
    delete setOnce.$initial_os_name;
  }
  properties.$set = set;
  properties.$set_once = setOnce;
}

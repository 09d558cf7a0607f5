import type { CapturedEvent } from '@hogbase/event-contract';
import { exceedsDistinctIdLength, normalizeDistinctId } from '../persons/distinct-id.util';
import type {
  IngestionWarning,
  Properties,
  RejectedEvent,
  RejectionReason,
} from '../persons/person-processing.types';
import { scalarText } from '../shared/postgres-text.util';
import { addInitialPersonProperties, isPlainObject } from './person-initial-properties.util';

export interface ParsedEvent {
  uuid: string;
  teamId: number;
  distinctId: string;
  event: string;
  timestamp: string;
  timestampMs: number;
  properties: Properties;
  /** False for `$process_person_profile: false`. */
  processPerson: boolean;
  warnings: IngestionWarning[];
}

export const MAX_EVENT_NAME_LENGTH = 200;
export const MAX_GROUP_KEY_LENGTH = 400;

/** Sent personless, these are dropped. */
const PERSON_REQUIRED_EVENTS = new Set([
  '$identify',
  '$create_alias',
  '$merge_dangerously',
  '$groupidentify',
]);

const PERSON_PROPERTY_OPERATIONS = ['$set', '$set_once', '$unset'] as const;
const GROUP_COLUMN_PROPERTIES = ['$group_0', '$group_1', '$group_2', '$group_3', '$group_4'] as const;

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CANONICAL_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;
const MAX_TEAM_ID = 2_147_483_647;

function reject(
  captured: Partial<CapturedEvent>,
  outcome: RejectedEvent['outcome'],
  reason: RejectionReason,
  detail: string,
): RejectedEvent {
  return {
    outcome,
    uuid: typeof captured.uuid === 'string' ? captured.uuid : null,
    teamId: typeof captured.team_id === 'number' ? captured.team_id : null,
    reason,
    detail,
  };
}

/** Years 1970..9999, which Postgres and ClickHouse take. */
function parseTimestamp(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return null;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1970 && year <= 9999 ? ms : null;
}

function resolveTimestamp(
  captured: Partial<CapturedEvent>,
  warnings: IngestionWarning[],
): { timestamp: string; timestampMs: number } {
  const ms = parseTimestamp(captured.timestamp);
  if (ms !== null) {
    const original = captured.timestamp as string;
    return {
      timestamp: CANONICAL_TIMESTAMP.test(original) ? original : new Date(ms).toISOString(),
      timestampMs: ms,
    };
  }
  const fallback = parseTimestamp(captured.now) ?? Date.now();
  warnings.push({ type: 'ignored_invalid_timestamp', details: { timestamp: captured.timestamp ?? null } });
  return { timestamp: new Date(fallback).toISOString(), timestampMs: fallback };
}

function parseData(data: unknown): Properties | string {
  if (typeof data !== 'string') return '`data` is not a string';
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    return `\`data\` is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  return isPlainObject(parsed) ? parsed : '`data` is not a JSON object';
}

/**
 * Never throws: a bad message is one rejected event, not a failed batch. PostHog's parse and
 * normalize steps: capture's top-level fields win over `data`'s; only an exact `false` in
 * `$process_person_profile` disables person processing, removing `$set*`, `$unset` and `$group_N`.
 */
export function parseCapturedEvent(input: CapturedEvent): ParsedEvent | RejectedEvent {
  const captured: Partial<CapturedEvent> = isPlainObject(input) ? input : {};
  if (typeof captured.uuid !== 'string' || !UUID_PATTERN.test(captured.uuid)) {
    return reject(captured, 'dead_letter', 'invalid_captured_event', '`uuid` is not a UUID');
  }
  const teamId = captured.team_id;
  if (typeof teamId !== 'number' || !Number.isSafeInteger(teamId) || teamId < 1 || teamId > MAX_TEAM_ID) {
    return reject(captured, 'dead_letter', 'invalid_captured_event', '`team_id` is not a project id');
  }
  if (typeof captured.event !== 'string' || captured.event === '') {
    return reject(captured, 'dead_letter', 'invalid_captured_event', '`event` is missing or empty');
  }
  const rawDistinctId: unknown = captured.distinct_id;
  if ((typeof rawDistinctId !== 'string' && typeof rawDistinctId !== 'number') || rawDistinctId === '') {
    return reject(captured, 'dead_letter', 'invalid_distinct_id', '`distinct_id` is missing or empty');
  }
  const distinctId = normalizeDistinctId(rawDistinctId);
  if (exceedsDistinctIdLength(distinctId)) {
    return reject(
      captured,
      'dead_letter',
      'invalid_distinct_id',
      '`distinct_id` is longer than 400 characters',
    );
  }

  const data = parseData(captured.data);
  if (typeof data === 'string') return reject(captured, 'dead_letter', 'invalid_event_data', data);
  const rawProperties = data.properties ?? {};
  if (!isPlainObject(rawProperties)) {
    return reject(captured, 'dead_letter', 'invalid_properties', '`properties` is not a JSON object');
  }
  const properties: Properties = rawProperties;
  for (const operation of ['$set', '$set_once'] as const) {
    const topLevel = data[operation];
    if (isPlainObject(topLevel)) {
      const nested = properties[operation];
      properties[operation] = { ...(isPlainObject(nested) ? nested : {}), ...topLevel };
    }
  }

  const warnings: IngestionWarning[] = [];
  const event = captured.event.slice(0, MAX_EVENT_NAME_LENGTH);
  const { timestamp, timestampMs } = resolveTimestamp(captured, warnings);

  const processPersonProfile = properties.$process_person_profile;
  const processPerson = processPersonProfile !== false;
  if (processPersonProfile !== undefined && typeof processPersonProfile !== 'boolean') {
    warnings.push({
      type: 'invalid_process_person_profile',
      details: { $process_person_profile: processPersonProfile },
    });
  }

  if (!processPerson) {
    if (PERSON_REQUIRED_EVENTS.has(event)) {
      return reject(
        captured,
        'dropped',
        'invalid_event_when_process_person_profile_is_false',
        `${event} needs person processing, but the event sets $process_person_profile to false`,
      );
    }
    for (const key of [...PERSON_PROPERTY_OPERATIONS, ...GROUP_COLUMN_PROPERTIES]) delete properties[key];
  } else {
    delete properties.$process_person_profile;
    addInitialPersonProperties(event, properties);
    if (event === 'survey shown') {
      const set = isPlainObject(properties.$set) ? properties.$set : {};
      if (!('$survey_last_seen_date' in set)) set.$survey_last_seen_date = timestamp;
      properties.$set = set;
    }
    if (event === '$groupidentify') {
      // A group identify never changes the sender's person properties.
      for (const key of PERSON_PROPERTY_OPERATIONS) delete properties[key];
      const groupKey = scalarText(properties.$group_key);
      if (groupKey !== null && groupKey.length > MAX_GROUP_KEY_LENGTH) {
        return reject(
          captured,
          'dropped',
          'group_key_too_long',
          '`$group_key` is longer than 400 characters',
        );
      }
    }
  }

  return {
    uuid: captured.uuid,
    teamId,
    distinctId,
    event,
    timestamp,
    timestampMs,
    properties,
    processPerson,
    warnings,
  };
}

export function isParsedEvent(value: ParsedEvent | RejectedEvent): value is ParsedEvent {
  return !('outcome' in value);
}

export const EVENTS_TABLE = 'events';

/**
 * One row of the events table as ingestion writes it. Date-times are UTC text in ClickHouse's
 * format (`toClickHouseDateTime64` converts ISO 8601). Optional fields take the column default:
 * `$group_N` are then read from `properties.$group_N`, `_timestamp` is the insert time.
 */
export interface EventRow {
  uuid: string;
  event: string;
  /** The event's properties, a JSON object encoded as a string. */
  properties: string;
  /** `YYYY-MM-DD hh:mm:ss.ffffff`, UTC. */
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain?: string;
  /** When capture received the event (the same for every delivery of it), `YYYY-MM-DD hh:mm:ss.ffffff`, UTC. */
  created_at: string;
  person_id: string;
  /** JSON object encoded as a string; `{}` when absent. */
  person_properties?: string;
  /** `YYYY-MM-DD hh:mm:ss[.fff]`, UTC. */
  person_created_at?: string;
  $group_0?: string;
  $group_1?: string;
  $group_2?: string;
  $group_3?: string;
  $group_4?: string;
  /** The version ReplacingMergeTree keeps the latest of: `YYYY-MM-DD hh:mm:ss`, UTC. */
  _timestamp?: string;
  /** Kafka offset of the message the event came from (kafkajs gives it as a string). */
  _offset?: number | string;
}

/** A row as read back: every column present; 64-bit integers other than team_id stay strings. */
export interface StoredEventRow extends Required<Omit<EventRow, '_offset'>> {
  _offset: string;
}

/** Every column of the events table, in its order. */
export const EVENTS_TABLE_COLUMNS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'team_id',
  'distinct_id',
  'elements_chain',
  'created_at',
  'person_id',
  'person_properties',
  'person_created_at',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
  '_timestamp',
  '_offset',
] as const satisfies readonly (keyof StoredEventRow)[];

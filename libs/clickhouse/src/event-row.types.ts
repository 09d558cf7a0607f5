export const EVENTS_TABLE = 'events';

/** Date-times are UTC `YYYY-MM-DD hh:mm:ss.ffffff`; an optional field left out takes its default. */
export interface EventRow {
  uuid: string;
  event: string;
  /** A JSON object encoded as a string. */
  properties: string;
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain?: string;
  /** When capture received the event: the same for every delivery of it. */
  created_at: string;
  person_id: string;
  /** JSON object encoded as a string; `{}` when absent. */
  person_properties?: string;
  /** `YYYY-MM-DD hh:mm:ss[.fff]`. */
  person_created_at?: string;
  $group_0?: string;
  $group_1?: string;
  $group_2?: string;
  $group_3?: string;
  $group_4?: string;
  /** The version ReplacingMergeTree keeps the latest of, `YYYY-MM-DD hh:mm:ss`. */
  _timestamp?: string;
  /** Kafka offset of its message (kafkajs gives a string). */
  _offset?: number | string;
}

/** 64-bit integers other than team_id stay strings. */
export interface StoredEventRow extends Required<Omit<EventRow, '_offset'>> {
  _offset: string;
}

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

import { chainToElements, type ElementRecord } from './elements-chain.util';

/** The person an event's distinct id belongs to now (Postgres), as the listing shows it. */
export interface EventPerson {
  is_identified: boolean;
  distinct_ids: string[];
  properties: Record<string, unknown>;
}

export interface EventRecord {
  id: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  event: string;
  timestamp: string;
  person: EventPerson | null;
  elements: ElementRecord[];
  elements_chain: string;
}

/** A row of the events table, as the listing reads it. */
export interface EventRow {
  uuid: string;
  event: string;
  properties: string;
  timestamp: string;
  distinct_id: string;
  elements_chain: string;
}

/** ClickHouse's `YYYY-MM-DD hh:mm:ss.ffffff` (UTC) as ISO 8601 with an explicit UTC offset. */
export function isoTimestamp(clickhouse: string): string {
  return `${clickhouse.replace(' ', 'T')}+00:00`;
}

export function parseJsonObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function toEventRecord(row: EventRow, person: EventPerson | null): EventRecord {
  return {
    id: row.uuid,
    distinct_id: row.distinct_id,
    properties: parseJsonObject(row.properties),
    event: row.event,
    timestamp: isoTimestamp(row.timestamp),
    person,
    elements: chainToElements(row.elements_chain),
    elements_chain: row.elements_chain,
  };
}

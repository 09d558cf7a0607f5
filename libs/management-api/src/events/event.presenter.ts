import { ApiProperty } from '@nestjs/swagger';
import { ANY_JSON, ApiModel, FREE_FORM_ARRAY, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';
import { chainToElements, type ElementRecord } from './elements-chain.util';

const NULLABLE_STRING = { type: String, nullable: true } as const;
const NULLABLE_INTEGER = { type: 'integer', nullable: true } as const;

/** One element of an autocapture event (elements-chain.util.ts' ElementRecord, PostHog's Element). */
@ApiModel('Element')
export class ElementResponse implements ElementRecord {
  @ApiProperty({ ...NULLABLE_STRING, description: 'Always null' })
  event!: null;

  @ApiProperty(NULLABLE_STRING)
  text!: string | null;

  @ApiProperty(NULLABLE_STRING)
  tag_name!: string | null;

  @ApiProperty({ type: [String], nullable: true })
  attr_class!: string[] | null;

  @ApiProperty(NULLABLE_STRING)
  href!: string | null;

  @ApiProperty(NULLABLE_STRING)
  attr_id!: string | null;

  @ApiProperty(NULLABLE_INTEGER)
  nth_child!: number | null;

  @ApiProperty(NULLABLE_INTEGER)
  nth_of_type!: number | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  attributes!: Record<string, string>;

  @ApiProperty({ type: 'integer', description: 'Its place in the chain, innermost first' })
  order!: number;
}

/** The person an event's distinct id belongs to now (Postgres), as the listing shows it. */
@ApiModel('EventPerson')
export class EventPerson {
  @ApiProperty()
  is_identified!: boolean;

  @ApiProperty({ type: [String] })
  distinct_ids!: string[];

  @ApiProperty(FREE_FORM_OBJECT)
  properties!: Record<string, unknown>;
}

/** PostHog's ClickhouseEvent, as the deprecated event listing answers it. */
@ApiModel('Event')
export class EventRecord {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  distinct_id!: string;

  @ApiProperty(FREE_FORM_OBJECT)
  properties!: Record<string, unknown>;

  @ApiProperty()
  event!: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'ISO 8601 with its UTC offset' })
  timestamp!: string;

  @ApiProperty({
    type: () => EventPerson,
    nullable: true,
    description: 'The person its distinct id belongs to now, if any',
  })
  person!: EventPerson | null;

  @ApiProperty({ type: () => ElementResponse, isArray: true })
  elements!: ElementResponse[];

  @ApiProperty({ description: 'The autocapture elements as one string (PostHog’s chain)' })
  elements_chain!: string;
}

/** The event list with `select`: one array per row, in the order of `columns`. */
@ApiModel('EventSelectPage')
export class EventSelectPageResponse {
  @ApiProperty({
    type: String,
    format: 'uri',
    nullable: true,
    description: 'The next page, or null on the last one',
  })
  next!: string | null;

  @ApiProperty({
    type: 'array',
    items: FREE_FORM_ARRAY,
    description: "One array per row: its columns' values",
  })
  results!: unknown[][];

  @ApiProperty({ type: [String], description: 'The select expressions, as given' })
  columns!: string[];

  @ApiProperty({ type: [String], description: "The columns' ClickHouse types" })
  types!: string[];
}

/** One value of `values/`. */
@ApiModel('EventPropertyValue')
export class EventPropertyValueResponse {
  @ApiProperty({ ...ANY_JSON, description: 'A value the property (or column) took, or an event name' })
  name!: unknown;
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

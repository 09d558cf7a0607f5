import { toClickHouseDateTime64, type EventRow } from '@hogbase/clickhouse';
import type { ProcessedEvent } from '../persons/person-processing.types';
import { sanitizeText } from '../shared/postgres-text.util';
import { splitElements } from './elements-chain.util';

/** A RangeError for a timestamp DateTime64 cannot store: the caller dead-letters that event. */
export function toEventRow(event: ProcessedEvent, createdAt: Date, offset: string): EventRow {
  const [group0, group1, group2, group3, group4] = event.groups;
  const { properties, elementsChain } = splitElements(event.properties);
  return {
    uuid: event.uuid,
    // Capture replaces lone surrogates already; an older message or another producer's may still have them.
    event: sanitizeText(event.event),
    properties: JSON.stringify(properties),
    timestamp: toClickHouseDateTime64(event.timestamp),
    team_id: event.teamId,
    distinct_id: event.distinctId,
    elements_chain: sanitizeText(elementsChain),
    created_at: toClickHouseDateTime64(createdAt),
    person_id: event.personId,
    person_properties: JSON.stringify(event.personProperties),
    person_created_at: toClickHouseDateTime64(event.personCreatedAt),
    $group_0: group0 ?? '',
    $group_1: group1 ?? '',
    $group_2: group2 ?? '',
    $group_3: group3 ?? '',
    $group_4: group4 ?? '',
    _offset: offset,
  };
}

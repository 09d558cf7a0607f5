import type { ParsedEvent } from '../events/parse-captured-event.util';
import { applyEventGroups } from '../groups/event-groups.util';
import type { GroupTypeIndexes } from '../groups/group-types.util';
import type { GroupWrites } from '../groups/group-writes.state';
import { exceedsDistinctIdLength, isDistinctIdIllegal, normalizeDistinctId } from './distinct-id.util';
import type { PersonBatchState, PersonRecord } from './person-batch.state';
import type { DistinctIdRef } from './person.repository';
import type { IngestionWarning, ProcessedEvent, Properties } from './person-processing.types';
import { computePropertyUpdate, hasPropertyChanges, initialPersonProperties } from './person-properties.util';
import { personUuid } from './person-uuid.util';

/** PostHog's marker for a personless event's stand-in person: 5 s after the epoch. */
export const PERSONLESS_PERSON_CREATED_AT = '1970-01-01T00:00:05.000Z';
const FORCE_UPGRADE_AFTER_MS = 60_000;

export interface MergeRequest {
  otherDistinctId: string;
  intoDistinctId: string;
}

/**
 * PostHog's triggers (nodejs/src/worker/ingestion/persons/person-merge-service.ts), merging into the
 * event's distinct id, except `$create_alias`: its sender's id is merged into the alias, the main id.
 * `$identify`'s `$anon_distinct_id` counts even when null (it stringifies to the illegal "null").
 */
export function mergeRequestOf(event: ParsedEvent): MergeRequest | null {
  const { properties } = event;
  if (event.event === '$create_alias' && properties.alias) {
    return { otherDistinctId: event.distinctId, intoDistinctId: normalizeDistinctId(properties.alias) };
  }
  let other: unknown;
  if (event.event === '$merge_dangerously' && properties.alias) {
    other = properties.alias;
  } else if (event.event === '$identify' && '$anon_distinct_id' in properties) {
    other = properties.$anon_distinct_id;
  } else {
    return null;
  }
  return { otherDistinctId: normalizeDistinctId(other), intoDistinctId: event.distinctId };
}

/** The into side is reported first, as PostHog does; either side may come from a property. */
function illegalMergeId({ otherDistinctId, intoDistinctId }: MergeRequest): string | null {
  for (const distinctId of [intoDistinctId, otherDistinctId]) {
    if (isDistinctIdIllegal(distinctId) || exceedsDistinctIdLength(distinctId)) return distinctId;
  }
  return null;
}

export function distinctIdsToLoad(events: readonly ParsedEvent[]): DistinctIdRef[] {
  const refs = new Map<string, DistinctIdRef>();
  const add = (teamId: number, distinctId: string): void => {
    refs.set(`${teamId}:${distinctId}`, { teamId, distinctId });
  };
  for (const event of events) {
    add(event.teamId, event.distinctId);
    const merge = event.processPerson ? mergeRequestOf(event) : null;
    if (merge && illegalMergeId(merge) === null) {
      add(event.teamId, merge.otherDistinctId);
      add(event.teamId, merge.intoDistinctId);
    }
  }
  return [...refs.values()];
}

const noGroups = (): ProcessedEvent['groups'] => [null, null, null, null, null];

/** Pure: applies events in batch order to the state; the writes happen once for the batch afterwards. */
export class PersonEventApplier {
  constructor(
    private readonly state: PersonBatchState,
    private readonly groupTypes: GroupTypeIndexes,
    private readonly groupWrites: GroupWrites,
  ) {}

  apply(event: ParsedEvent): ProcessedEvent {
    // The parsed event must not change: a retried batch is applied again.
    const warnings = [...event.warnings];
    const row = {
      outcome: 'ok' as const,
      uuid: event.uuid,
      teamId: event.teamId,
      distinctId: event.distinctId,
      event: event.event,
      timestamp: event.timestamp,
      properties: event.properties,
      warnings,
    };

    if (!event.processPerson) {
      const person = this.state.find(event.teamId, event.distinctId);
      if (!person) {
        return {
          ...row,
          personId: personUuid(event.teamId, event.distinctId),
          personProperties: {},
          personCreatedAt: PERSONLESS_PERSON_CREATED_AT,
          personMode: 'propertyless',
          groups: noGroups(),
        };
      }
      return {
        ...row,
        personId: person.uuid,
        personProperties: {},
        personCreatedAt: new Date(person.createdAtMs).toISOString(),
        personMode:
          event.timestampMs > person.createdAtMs + FORCE_UPGRADE_AFTER_MS ? 'force_upgrade' : 'propertyless',
        groups: noGroups(),
      };
    }

    const person = this.processPerson(event, warnings);
    const { groups, properties } = applyEventGroups(event, this.groupTypes, this.groupWrites, warnings);
    return {
      ...row,
      properties,
      personId: person.uuid,
      personProperties: { ...person.properties },
      personCreatedAt: new Date(person.createdAtMs).toISOString(),
      personMode: 'full',
      groups,
    };
  }

  private processPerson(event: ParsedEvent, warnings: IngestionWarning[]): PersonRecord {
    const merged = this.handleIdentifyOrAlias(event, warnings);
    if (merged) {
      if (merged.needsUpdate) this.updateProperties(merged.person, event, true);
      return merged.person;
    }
    const existing = this.state.find(event.teamId, event.distinctId);
    if (existing) {
      this.updateProperties(existing, event, false);
      return existing;
    }
    return this.createPerson(event, [event.distinctId], false);
  }

  /** PostHog's refusals: an illegal id, or an identified other person unless `$merge_dangerously`. */
  private handleIdentifyOrAlias(
    event: ParsedEvent,
    warnings: IngestionWarning[],
  ): { person: PersonRecord; needsUpdate: boolean } | null {
    const request = mergeRequestOf(event);
    if (!request || request.otherDistinctId === request.intoDistinctId) return null;
    const { otherDistinctId, intoDistinctId } = request;
    const illegal = illegalMergeId(request);
    if (illegal !== null) {
      warnings.push({
        type: 'cannot_merge_with_illegal_distinct_id',
        details: {
          illegalDistinctId: illegal,
          otherDistinctId: illegal === intoDistinctId ? otherDistinctId : intoDistinctId,
          eventUuid: event.uuid,
        },
      });
      return null;
    }

    const otherPerson = this.state.find(event.teamId, otherDistinctId);
    const intoPerson = this.state.find(event.teamId, intoDistinctId);
    if (otherPerson && !intoPerson) {
      this.state.addDistinctId(otherPerson, event.teamId, intoDistinctId);
      return { person: otherPerson, needsUpdate: true };
    }
    if (intoPerson && !otherPerson) {
      this.state.addDistinctId(intoPerson, event.teamId, otherDistinctId);
      return { person: intoPerson, needsUpdate: true };
    }
    if (otherPerson && intoPerson) {
      if (otherPerson === intoPerson) return { person: intoPerson, needsUpdate: true };
      if (otherPerson.isIdentified && event.event !== '$merge_dangerously') {
        warnings.push({
          type: 'cannot_merge_already_identified',
          details: {
            sourcePersonDistinctId: otherDistinctId,
            targetPersonDistinctId: intoDistinctId,
            eventUuid: event.uuid,
          },
        });
        // PostHog gives the event the into person, there always the event's own. The ids stay
        // apart, so a `$create_alias` stays on its sender's person, which its distinct_id names.
        return { person: event.distinctId === intoDistinctId ? intoPerson : otherPerson, needsUpdate: true };
      }
      // On conflicting keys the surviving person wins; then the event's own updates.
      const mergedProperties: Properties = { ...otherPerson.properties, ...intoPerson.properties };
      const update = computePropertyUpdate(event.event, event.properties, mergedProperties);
      this.state.merge(intoPerson, otherPerson, mergedProperties);
      this.state.applyPropertyUpdate(intoPerson, update, event.timestamp);
      return { person: intoPerson, needsUpdate: true };
    }
    // Neither id has a person: the UUID comes from the into id, the main id from now on.
    return { person: this.createPerson(event, [intoDistinctId, otherDistinctId], true), needsUpdate: false };
  }

  private createPerson(
    event: ParsedEvent,
    distinctIds: readonly string[],
    isIdentified: boolean,
  ): PersonRecord {
    const { properties, operations } = initialPersonProperties(event.properties, event.uuid);
    return this.state.create(event.teamId, distinctIds, {
      properties,
      operations,
      isIdentified,
      createdAtMs: event.timestampMs,
      timestamp: event.timestamp,
    });
  }

  private updateProperties(person: PersonRecord, event: ParsedEvent, updateIsIdentified: boolean): void {
    const update = computePropertyUpdate(event.event, event.properties, person.properties);
    let write = update.triggersWrite;
    if (updateIsIdentified && !person.isIdentified) {
      person.isIdentified = true;
      write = true;
    }
    if (hasPropertyChanges(update)) this.state.applyPropertyUpdate(person, update, event.timestamp);
    if (write) this.state.markWrite(person);
  }
}

import { randomUUID } from 'node:crypto';
import { setOwn } from '../shared/own-property.util';
import type { Properties } from './person-processing.types';
import { jsonEquals, PropertyOperation, PropertyUpdate } from './person-properties.util';
import { personUuid } from './person-uuid.util';

export interface LoadedPerson {
  id: string;
  uuid: string;
  teamId: number;
  properties: Properties;
  propertiesLastUpdatedAt: Record<string, string>;
  propertiesLastOperation: Record<string, PropertyOperation>;
  isIdentified: boolean;
  createdAt: Date;
  version: number;
}

export interface LoadedDistinctId {
  teamId: number;
  distinctId: string;
  personId: string;
}

export interface PersonRecord {
  /** Null for a person created by this batch until it is inserted. */
  id: string | null;
  uuid: string;
  teamId: number;
  properties: Properties;
  propertiesLastUpdatedAt: Record<string, string>;
  propertiesLastOperation: Record<string, PropertyOperation>;
  isIdentified: boolean;
  createdAtMs: number;
  version: number;
  /** Inserted at the end, unless merged away before. */
  isNew: boolean;
  needsWrite: boolean;
  versionBumped: boolean;
  /** Merged into another person by this batch: it will be deleted. */
  mergedInto: PersonRecord | null;
  absorbedPerson: boolean;
  /** Null for a new person; a change undone in the batch is no write. */
  loaded: { properties: Properties; isIdentified: boolean; createdAtMs: number } | null;
  distinctIdKeys: Set<string>;
}

export interface NewDistinctId {
  teamId: number;
  distinctId: string;
  person: PersonRecord;
}

export interface PersonWritePlan {
  inserts: PersonRecord[];
  updates: PersonRecord[];
  merges: { from: PersonRecord; into: PersonRecord }[];
  newDistinctIds: NewDistinctId[];
}

/** False when the changes cancelled out (a redelivered batch): nothing written, the version stays. */
function changedSinceLoad(person: PersonRecord): boolean {
  const { loaded } = person;
  return (
    loaded === null ||
    person.absorbedPerson ||
    loaded.isIdentified !== person.isIdentified ||
    loaded.createdAtMs !== person.createdAtMs ||
    !jsonEquals(loaded.properties, person.properties)
  );
}

export function distinctIdKey(teamId: number, distinctId: string): string {
  return `${teamId}:${distinctId}`;
}

export class PersonBatchState {
  private readonly personsByDistinctId = new Map<string, PersonRecord>();
  private readonly addedDistinctIds = new Map<string, { teamId: number; distinctId: string }>();
  private readonly persons: PersonRecord[] = [];

  constructor(private readonly unavailableUuids: ReadonlySet<string> = new Set()) {}

  load(persons: readonly LoadedPerson[], distinctIds: readonly LoadedDistinctId[]): void {
    const byId = new Map<string, PersonRecord>();
    for (const person of persons) {
      const record: PersonRecord = {
        id: person.id,
        uuid: person.uuid,
        teamId: person.teamId,
        properties: person.properties,
        propertiesLastUpdatedAt: person.propertiesLastUpdatedAt,
        propertiesLastOperation: person.propertiesLastOperation,
        isIdentified: person.isIdentified,
        createdAtMs: person.createdAt.getTime(),
        version: person.version,
        isNew: false,
        needsWrite: false,
        versionBumped: false,
        mergedInto: null,
        absorbedPerson: false,
        // Shallow is enough: property values are replaced, never changed in place.
        loaded: {
          properties: { ...person.properties },
          isIdentified: person.isIdentified,
          createdAtMs: person.createdAt.getTime(),
        },
        distinctIdKeys: new Set(),
      };
      byId.set(person.id, record);
      this.persons.push(record);
    }
    for (const { teamId, distinctId, personId } of distinctIds) {
      const person = byId.get(personId);
      if (!person)
        throw new Error(`distinct id ${teamId}:${distinctId} points at unloaded person ${personId}`);
      const key = distinctIdKey(teamId, distinctId);
      this.personsByDistinctId.set(key, person);
      person.distinctIdKeys.add(key);
    }
  }

  find(teamId: number, distinctId: string): PersonRecord | undefined {
    return this.personsByDistinctId.get(distinctIdKey(teamId, distinctId));
  }

  /** Its UUID derives from the first distinct id, as PostHog's does. */
  create(
    teamId: number,
    distinctIds: readonly string[],
    init: {
      properties: Properties;
      operations: Record<string, PropertyOperation>;
      isIdentified: boolean;
      createdAtMs: number;
      timestamp: string;
    },
  ): PersonRecord {
    const derivedUuid = personUuid(teamId, distinctIds[0]);
    const person: PersonRecord = {
      id: null,
      // NOTE: only when another person already holds the derived UUID (see PersonUuidTakenError).
      uuid: this.unavailableUuids.has(derivedUuid) ? randomUUID() : derivedUuid,
      teamId,
      properties: init.properties,
      propertiesLastUpdatedAt: Object.fromEntries(
        Object.keys(init.operations).map((key) => [key, init.timestamp]),
      ),
      propertiesLastOperation: { ...init.operations },
      isIdentified: init.isIdentified,
      createdAtMs: init.createdAtMs,
      version: 0,
      isNew: true,
      needsWrite: true,
      versionBumped: true,
      mergedInto: null,
      absorbedPerson: false,
      loaded: null,
      distinctIdKeys: new Set(),
    };
    this.persons.push(person);
    for (const distinctId of distinctIds) this.addDistinctId(person, teamId, distinctId);
    return person;
  }

  addDistinctId(person: PersonRecord, teamId: number, distinctId: string): void {
    const key = distinctIdKey(teamId, distinctId);
    if (this.personsByDistinctId.has(key)) throw new Error(`distinct id ${key} already has a person`);
    this.personsByDistinctId.set(key, person);
    this.addedDistinctIds.set(key, { teamId, distinctId });
    person.distinctIdKeys.add(key);
  }

  markWrite(person: PersonRecord): void {
    person.needsWrite = true;
    if (!person.versionBumped) {
      person.version += 1;
      person.versionBumped = true;
    }
  }

  applyPropertyUpdate(person: PersonRecord, update: PropertyUpdate, timestamp: string): void {
    for (const [key, value] of Object.entries(update.toSet)) {
      setOwn(person.properties, key, value);
      setOwn(person.propertiesLastOperation, key, update.operations[key]);
      setOwn(person.propertiesLastUpdatedAt, key, timestamp);
    }
    for (const key of update.toUnset) {
      delete person.properties[key];
      delete person.propertiesLastOperation[key];
      delete person.propertiesLastUpdatedAt[key];
    }
  }

  /**
   * PostHog's mergePeople (nodejs/src/worker/ingestion/persons/person-merge-service.ts): `into` keeps
   * its UUID, takes the older created_at and a version above both; `other` will be deleted.
   */
  merge(into: PersonRecord, other: PersonRecord, properties: Properties): void {
    into.properties = properties;
    into.propertiesLastUpdatedAt = { ...other.propertiesLastUpdatedAt, ...into.propertiesLastUpdatedAt };
    into.propertiesLastOperation = { ...other.propertiesLastOperation, ...into.propertiesLastOperation };
    into.createdAtMs = Math.min(into.createdAtMs, other.createdAtMs);
    into.isIdentified = true;
    into.version = Math.max(into.version, other.version) + 1;
    into.versionBumped = true;
    into.needsWrite = true;
    into.absorbedPerson = true;
    for (const key of other.distinctIdKeys) {
      this.personsByDistinctId.set(key, into);
      into.distinctIdKeys.add(key);
    }
    other.distinctIdKeys.clear();
    other.mergedInto = into;
  }

  plan(): PersonWritePlan {
    const survivor = (person: PersonRecord): PersonRecord => {
      let current = person;
      while (current.mergedInto) current = current.mergedInto;
      return current;
    };
    const newDistinctIds: NewDistinctId[] = [];
    for (const [key, { teamId, distinctId }] of this.addedDistinctIds) {
      const person = this.personsByDistinctId.get(key);
      if (!person || person.mergedInto) throw new Error(`distinct id ${key} lost its person`);
      newDistinctIds.push({ teamId, distinctId, person });
    }
    return {
      inserts: this.persons.filter((person) => person.isNew && !person.mergedInto),
      updates: this.persons.filter(
        (person) => !person.isNew && !person.mergedInto && person.needsWrite && changedSinceLoad(person),
      ),
      merges: this.persons
        .filter((person) => !person.isNew && person.mergedInto)
        .map((person) => ({ from: person, into: survivor(person) })),
      newDistinctIds,
    };
  }
}

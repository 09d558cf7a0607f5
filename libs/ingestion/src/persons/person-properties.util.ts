import { isFilteredPersonUpdateProperty, isPlainObject } from '../events/person-initial-properties.util';
import { ownValue, setOwn } from '../shared/own-property.util';
import type { Properties } from './person-processing.types';

export type PropertyOperation = 'set' | 'set_once';

/** What one event does to a person's properties (PostHog's `computeEventPropertyUpdates`). */
export interface PropertyUpdate {
  toSet: Properties;
  operations: Record<string, PropertyOperation>;
  toUnset: string[];
  /** Not only volatile `$current_url`-like changes. */
  triggersWrite: boolean;
}

// Processed in another pipeline in PostHog, with no ordering against person updates.
const NO_PERSON_UPDATE_EVENTS = new Set(['$exception', '$$heatmap']);
// Person events always write whatever they change.
const PERSON_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$set']);

/** Structural equality of JSON values: a `$set` of an equal nested object is not a change. */
export function jsonEquals(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) {
    return false;
  }
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, index) => jsonEquals(item, right[index]));
  }
  const leftObject = left as Properties;
  const rightObject = right as Properties;
  const leftKeys = Object.keys(leftObject);
  if (leftKeys.length !== Object.keys(rightObject).length) return false;
  return leftKeys.every(
    (key) => Object.hasOwn(rightObject, key) && jsonEquals(leftObject[key], rightObject[key]),
  );
}

function objectOrEmpty(value: unknown): Properties {
  return isPlainObject(value) ? value : {};
}

function unsetKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((key): key is string => typeof key === 'string');
  return isPlainObject(value) ? Object.keys(value) : [];
}

/** `$set` wins over `$set_once` on a key; `$unset` applies after the sets, as PostHog does. */
export function computePropertyUpdate(
  eventName: string,
  eventProperties: Properties,
  personProperties: Properties,
): PropertyUpdate {
  const update: PropertyUpdate = { toSet: {}, operations: {}, toUnset: [], triggersWrite: false };
  if (NO_PERSON_UPDATE_EVENTS.has(eventName)) return update;
  const forced = PERSON_EVENTS.has(eventName);

  for (const [key, value] of Object.entries(objectOrEmpty(eventProperties.$set_once))) {
    if (ownValue(personProperties, key) === undefined) {
      setOwn(update.toSet, key, value);
      setOwn(update.operations, key, 'set_once');
      if (forced || !isFilteredPersonUpdateProperty(key)) update.triggersWrite = true;
    }
  }
  for (const [key, value] of Object.entries(objectOrEmpty(eventProperties.$set))) {
    const current = ownValue(personProperties, key);
    if (!jsonEquals(current, value)) {
      setOwn(update.toSet, key, value);
      setOwn(update.operations, key, 'set');
      if (forced || current === undefined || !isFilteredPersonUpdateProperty(key)) {
        update.triggersWrite = true;
      }
    }
  }
  for (const key of unsetKeys(eventProperties.$unset)) {
    if (Object.hasOwn(personProperties, key)) {
      update.toUnset.push(key);
      update.triggersWrite = true;
    }
  }
  return update;
}

export function hasPropertyChanges(update: PropertyUpdate): boolean {
  return update.toUnset.length > 0 || Object.keys(update.toSet).length > 0;
}

export function initialPersonProperties(
  eventProperties: Properties,
  creatorEventUuid: string,
): { properties: Properties; operations: Record<string, PropertyOperation> } {
  const setOnce = objectOrEmpty(eventProperties.$set_once);
  const set = objectOrEmpty(eventProperties.$set);
  const operations: Record<string, PropertyOperation> = {};
  for (const key of Object.keys(setOnce)) setOwn(operations, key, 'set_once');
  for (const key of Object.keys(set)) setOwn(operations, key, 'set');
  return { properties: { ...setOnce, ...set, $creator_event_uuid: creatorEventUuid }, operations };
}

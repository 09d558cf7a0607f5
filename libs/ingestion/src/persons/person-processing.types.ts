/** A JSON object as events carry it. */
export type Properties = Record<string, unknown>;

/** How the event relates to a person, as ClickHouse's `person_mode` column says. */
export type PersonMode = 'full' | 'propertyless' | 'force_upgrade';

/** The group keys of the event, by group type index: the `$group_0` .. `$group_4` columns. */
export type GroupColumns = [string | null, string | null, string | null, string | null, string | null];

/** Something the project owner should know about an event that was still ingested. */
export interface IngestionWarning {
  type: IngestionWarningType;
  details: Record<string, unknown>;
}

export type IngestionWarningType =
  | 'cannot_merge_with_illegal_distinct_id'
  | 'cannot_merge_already_identified'
  | 'group_type_limit_reached'
  | 'invalid_group_type'
  | 'invalid_process_person_profile'
  | 'ignored_invalid_timestamp';

/** An event whose person and groups are resolved: what its ClickHouse row needs. */
export interface ProcessedEvent {
  outcome: 'ok';
  uuid: string;
  teamId: number;
  distinctId: string;
  /** The event name, at most 200 characters. */
  event: string;
  /** ISO 8601 UTC: the captured timestamp, or capture's `now` when that was unusable. */
  timestamp: string;
  /**
   * The event's properties as they should be stored: top-level `$set`/`$set_once` folded in,
   * automatic person properties added, `$group_N` set from `$groups`; for personless events
   * `$set`, `$set_once`, `$unset` and `$group_N` removed.
   */
  properties: Properties;
  /** The person's UUID (ClickHouse `person_id`). */
  personId: string;
  /** The person's properties right after this event (`{}` for personless events). */
  personProperties: Properties;
  /** ISO 8601 UTC; 1970-01-01T00:00:05Z for a personless event without a person. */
  personCreatedAt: string;
  personMode: PersonMode;
  groups: GroupColumns;
  warnings: IngestionWarning[];
}

/**
 * An event that is not ingested. `dropped`: by design (e.g. unknown project, identity event sent
 * without person processing), counted in a metric. `dead_letter`: the message cannot be processed
 * (e.g. `data` is not JSON) and goes to the dead-letter topic with the reason.
 */
export interface RejectedEvent {
  outcome: 'dropped' | 'dead_letter';
  uuid: string | null;
  teamId: number | null;
  reason: RejectionReason;
  detail: string;
}

export type RejectionReason =
  | 'invalid_captured_event'
  | 'invalid_event_data'
  | 'invalid_properties'
  | 'invalid_distinct_id'
  | 'unknown_team'
  | 'invalid_event_when_process_person_profile_is_false'
  | 'group_key_too_long'
  | 'postgres_rejected'
  | 'processing_failed';

export type EventOutcome = ProcessedEvent | RejectedEvent;

export type Properties = Record<string, unknown>;

export type PersonMode = 'full' | 'propertyless' | 'force_upgrade';

/** By group type index: the `$group_0` .. `$group_4` columns. */
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

export interface ProcessedEvent {
  outcome: 'ok';
  uuid: string;
  teamId: number;
  distinctId: string;
  /** At most 200 characters. */
  event: string;
  /** ISO 8601 UTC: the captured timestamp, or capture's `now` when that was unusable. */
  timestamp: string;
  /** As stored: `$set`/`$set_once` and `$groups` folded in; personless, without `$set*`, `$unset`, `$group_N`. */
  properties: Properties;
  /** ClickHouse `person_id`. */
  personId: string;
  /** Right after this event; `{}` for personless events. */
  personProperties: Properties;
  /** ISO 8601 UTC; 1970-01-01T00:00:05Z for a personless event without a person. */
  personCreatedAt: string;
  personMode: PersonMode;
  groups: GroupColumns;
  warnings: IngestionWarning[];
}

/** `dropped` by design and counted; `dead_letter` goes to the dead-letter topic with the reason. */
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

/** PostHog's CapturedEvent (`rust/common/types/src/event.rs`) plus the project id capture resolved. */
export interface CapturedEvent {
  /** The SDK's `uuid` when valid, else a UUIDv7 assigned by capture. */
  uuid: string;
  /** Stringified, at most 200 characters. */
  distinct_id: string;
  ip: string | null;
  /** The event as received, JSON-encoded (before timestamp normalisation). */
  data: string;
  /** Server receive time, ISO 8601 UTC. */
  now: string;
  sent_at: string | null;
  token: string;
  team_id: number;
  event: string;
  /** Clock-skew corrected, ISO 8601 UTC, with microseconds when known. */
  timestamp: string;
  historical_migration?: boolean;
}

export interface RawEvent {
  event?: unknown;
  distinct_id?: unknown;
  uuid?: unknown;
  properties?: Record<string, unknown>;
  timestamp?: unknown;
  offset?: unknown;
  $set?: Record<string, unknown>;
  $set_once?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One message on the queue: keyed `<team_id>:<distinct_id>` so one person's events stay in order. */
export interface QueueMessage {
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export const EVENTS_TOPIC = 'events_plugin_ingestion';
export const HISTORICAL_EVENTS_TOPIC = 'events_plugin_ingestion_historical';
export const DEAD_LETTER_TOPIC = 'events_plugin_ingestion_dlq';

export function partitionKey(teamId: number, distinctId: string): string {
  return `${teamId}:${distinctId}`;
}

export function toQueueMessage(event: CapturedEvent): QueueMessage {
  return {
    key: partitionKey(event.team_id, event.distinct_id),
    value: JSON.stringify(event),
    headers: {
      token: event.token,
      distinct_id: event.distinct_id,
      uuid: event.uuid,
      event: event.event,
      timestamp: String(Date.parse(event.timestamp)),
      now: event.now,
      historical_migration: event.historical_migration ? 'true' : 'false',
    },
  };
}

const RECORD_OVERHEAD_BYTES = 64;
const HEADER_OVERHEAD_BYTES = 8;

/** As a Kafka producer bounds it; capture bounds every run mode by it, so none takes what another refuses. */
export function queueMessageBytes(message: QueueMessage): number {
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(message.key) + Buffer.byteLength(message.value);
  for (const name in message.headers) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(message.headers[name]) + HEADER_OVERHEAD_BYTES;
  }
  return bytes;
}

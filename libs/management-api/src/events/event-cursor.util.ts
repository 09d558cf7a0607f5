import { ApiError } from '../common/api.error';

/** The last row served; unlike PostHog's `before=<timestamp>`, it never skips nor repeats an event. */
export interface EventCursor {
  /** ClickHouse DateTime64(6) text, `YYYY-MM-DD hh:mm:ss.ffffff`. */
  timestamp: string;
  uuid: string;
}

const CURSOR_PATTERN =
  /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6})\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeEventCursor(cursor: EventCursor): string {
  return Buffer.from(`${cursor.timestamp}|${cursor.uuid}`, 'utf8').toString('base64url');
}

export function decodeEventCursor(value: string): EventCursor {
  const match = CURSOR_PATTERN.exec(Buffer.from(value, 'base64url').toString('utf8'));
  if (!match) throw new ApiError('invalid_input', 'Invalid cursor.', 'cursor');
  return { timestamp: match[1], uuid: match[2] };
}

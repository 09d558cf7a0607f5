import type { CapturedEvent } from '@hogbase/event-contract';

import { parseBatch, type ParsedBatch } from './batch-parser.util';
import { EventTooLargeError, PayloadInvalidError } from './capture.errors';
import {
  createEventContext,
  normalizeBatch,
  normalizeEvent,
  normalizeUuid,
  type CaptureContext,
  type EventOutcome,
} from './event-normalizer.util';
import { parseTimestamp } from './timestamp.util';

const token = 'phc_project_token';
const now = new Date('2023-01-01T12:00:00.000Z');
const capture: CaptureContext = { teamId: 7, ip: '203.0.113.9', now };
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function batchOf(events: unknown[], overrides: Partial<ParsedBatch> = {}): ParsedBatch {
  return { token, events, sentAt: null, historicalMigration: false, eventNesting: 0, ...overrides };
}

function outcome(
  raw: unknown,
  overrides: Partial<ParsedBatch> = {},
  context: CaptureContext = capture,
): EventOutcome {
  return normalizeEvent(raw, createEventContext(batchOf([raw], overrides), context));
}

function accepted(
  raw: unknown,
  overrides: Partial<ParsedBatch> = {},
  context?: CaptureContext,
): CapturedEvent {
  const result = outcome(raw, overrides, context);
  if (!('accepted' in result)) throw new Error(`dropped: ${result.dropped} (${result.detail})`);
  return result.accepted;
}

function droppedReason(raw: unknown): string | undefined {
  const result = outcome(raw);
  return 'dropped' in result ? result.dropped : undefined;
}

describe('normalizeEvent', () => {
  it('builds the queue message of an event', () => {
    const raw = {
      event: 'signed up',
      distinct_id: 'user-1',
      uuid: '0189F7C0-8C4A-7B3E-9D2F-0123456789AB',
      timestamp: '2023-01-01T11:59:55Z',
      properties: { plan: 'pro' },
    };
    const sentAt = parseTimestamp('2023-01-01T12:00:05Z');
    expect(accepted(raw, { sentAt })).toEqual({
      uuid: '0189f7c0-8c4a-7b3e-9d2f-0123456789ab',
      distinct_id: 'user-1',
      ip: '203.0.113.9',
      data: JSON.stringify(raw),
      now: '2023-01-01T12:00:00.000Z',
      sent_at: '2023-01-01T12:00:05.000Z',
      token,
      team_id: 7,
      event: 'signed up',
      timestamp: '2023-01-01T11:59:50.000Z',
    });
  });

  it('marks historical migration only when the request asked for it', () => {
    const raw = { event: 'a', distinct_id: '1' };
    expect(accepted(raw, { historicalMigration: true }).historical_migration).toBe(true);
    expect(accepted(raw)).not.toHaveProperty('historical_migration');
  });

  it('keeps sent_at null and the timestamp as sent without sent_at', () => {
    const event = accepted({ event: 'a', distinct_id: '1', timestamp: '2023-01-01T11:00:00.123456Z' });
    expect(event.sent_at).toBeNull();
    expect(event.timestamp).toBe('2023-01-01T11:00:00.123456Z');
  });

  it('honours $ignore_sent_at', () => {
    const raw = {
      event: 'a',
      distinct_id: '1',
      timestamp: '2023-01-01T11:00:00Z',
      properties: { $ignore_sent_at: true },
    };
    expect(accepted(raw, { sentAt: parseTimestamp('2023-01-01T12:00:05Z') }).timestamp).toBe(
      '2023-01-01T11:00:00.000Z',
    );
  });

  it('applies offset', () => {
    expect(accepted({ event: 'a', distinct_id: '1', offset: 2000 }).timestamp).toBe(
      '2023-01-01T11:59:58.000Z',
    );
  });

  it('uses the loopback IP for capture_internal events', () => {
    expect(accepted({ event: 'a', distinct_id: '1', properties: { capture_internal: true } }).ip).toBe(
      '127.0.0.1',
    );
    expect(accepted({ event: 'a', distinct_id: '1' }, {}, { ...capture, ip: null }).ip).toBeNull();
  });

  describe('distinct_id', () => {
    it.each([
      ['top-level distinct_id', { distinct_id: 'a' }, 'a'],
      ['$distinct_id', { $distinct_id: 'a' }, 'a'],
      ['properties.distinct_id', { properties: { distinct_id: 'a' } }, 'a'],
      ['top level over properties', { distinct_id: 'a', properties: { distinct_id: 'b' } }, 'a'],
      ['properties when the top level is null', { distinct_id: null, properties: { distinct_id: 'b' } }, 'b'],
      ['a number, stringified', { distinct_id: 123 }, '123'],
      ['a float, stringified', { distinct_id: 1.5 }, '1.5'],
      ['a boolean, stringified', { distinct_id: false }, 'false'],
      ['an object, as JSON', { distinct_id: { id: 1 } }, '{"id":1}'],
      ['NUL replaced', { distinct_id: 'a\u0000b' }, 'a\uFFFDb'],
    ])('reads %s', (_what, fields, expected) => {
      expect(accepted({ event: 'e', ...fields }).distinct_id).toBe(expected);
    });

    it('cuts to 200 characters, counting code points and never splitting a pair', () => {
      expect(accepted({ event: 'e', distinct_id: 'x'.repeat(1_000) }).distinct_id).toBe('x'.repeat(200));
      const emoji = accepted({ event: 'e', distinct_id: '😀'.repeat(300) }).distinct_id;
      expect([...emoji]).toHaveLength(200);
      expect(emoji).toBe('😀'.repeat(200));
    });
  });

  describe('drops, with a reason', () => {
    it.each([
      ['an event without a name', { distinct_id: '1' }, 'missing_event_name'],
      ['an event with an empty name', { event: '', distinct_id: '1' }, 'missing_event_name'],
      ['an event whose name is not a string', { event: 42, distinct_id: '1' }, 'missing_event_name'],
      ['an event without distinct_id', { event: 'a' }, 'missing_distinct_id'],
      ['an event with a null distinct_id', { event: 'a', distinct_id: null }, 'missing_distinct_id'],
      ['an event with an empty distinct_id', { event: 'a', distinct_id: '' }, 'missing_distinct_id'],
      [
        'an event with an empty properties.distinct_id',
        { event: 'a', properties: { distinct_id: '' } },
        'missing_distinct_id',
      ],
      ['$performance_event', { event: '$performance_event', distinct_id: '1' }, 'performance_event'],
      ['a number', 5, 'not_an_object'],
      ['a string', 'event', 'not_an_object'],
      ['null', null, 'not_an_object'],
      ['an array', [{ event: 'a', distinct_id: '1' }], 'not_an_object'],
    ])('%s', (_what, raw, reason) => {
      expect(droppedReason(raw)).toBe(reason);
    });
  });

  describe('refuses the whole request', () => {
    /** An event whose JSON nests `depth` arrays and objects, its own braces included. */
    function nestedEvent(depth: number): unknown {
      return JSON.parse(
        `{"event":"a","distinct_id":"1","properties":{"p":${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`,
      );
    }

    it('413 for an event whose JSON is longer than maxEventBytes (1,000,000 by default)', () => {
      const context = { ...capture, maxEventBytes: 1_000 };
      const fits = { event: 'a', distinct_id: '1', properties: { text: 'x'.repeat(900) } };
      expect(outcome(fits, {}, context)).toHaveProperty('accepted');
      const over = { event: 'a', distinct_id: '1', properties: { text: 'x'.repeat(1_000) } };
      expect(() => outcome(over, {}, context)).toThrow(EventTooLargeError);
      const overDefault = { event: 'a', distinct_id: '1', properties: { text: 'x'.repeat(1_000_000) } };
      expect(() => outcome(overDefault)).toThrow(
        expect.objectContaining({ status: 413, code: 'event_too_large' }) as Error,
      );
    });

    it.each([
      ['a single event', 0],
      ['an array of events', 1],
      ['a batch object', 2],
    ])('400 for %s nesting 128 arrays and objects with the body around it; 127 is taken', (_form, around) => {
      const deepest = nestedEvent(127 - around);
      expect(outcome(deepest, { eventNesting: around })).toHaveProperty('accepted');
      const tooDeep = () => outcome(nestedEvent(128 - around), { eventNesting: around });
      expect(tooDeep).toThrow(PayloadInvalidError);
      expect(tooDeep).toThrow('failed to parse request: recursion limit exceeded');
    });

    it('400 for an event nested deeper than JSON.stringify can serialise', () => {
      expect(() => outcome(nestedEvent(100_000))).toThrow(PayloadInvalidError);
    });
  });

  describe('properties that are not an object', () => {
    it.each([
      ['a string', 'props'],
      ['an array', [1, 2]],
      ['a number', 3],
      ['null', null],
    ])('keeps the event when properties are %s, as sent', (_what, properties) => {
      const event = accepted({ event: 'a', distinct_id: '1', properties });
      expect(JSON.parse(event.data)).toEqual({ event: 'a', distinct_id: '1', properties });
    });

    it('then finds no distinct_id inside them', () => {
      expect(droppedReason({ event: 'a', properties: ['distinct_id'] })).toBe('missing_distinct_id');
    });
  });

  describe('uuid', () => {
    it('generates a UUIDv7 when none is sent, or an empty one', () => {
      expect(accepted({ event: 'a', distinct_id: '1' }).uuid).toMatch(UUID_V7);
      expect(accepted({ event: 'a', distinct_id: '1', uuid: '' }).uuid).toMatch(UUID_V7);
    });

    it('keeps the event and assigns a UUIDv7 when the uuid is invalid', () => {
      for (const uuid of ['not-a-uuid', 42, { id: 1 }, '0189f7c0-8c4a-7b3e-9d2f-0123456789ag']) {
        const event = accepted({ event: 'a', distinct_id: '1', uuid });
        expect(event.uuid).toMatch(UUID_V7);
        expect(JSON.parse(event.data)).toHaveProperty('uuid', uuid);
      }
    });

    it('generates distinct ids', () => {
      const uuids = new Set(
        Array.from({ length: 1_000 }, () => accepted({ event: 'a', distinct_id: '1' }).uuid),
      );
      expect(uuids.size).toBe(1_000);
    });
  });
});

describe('normalizeUuid', () => {
  it.each([
    ['0189f7c0-8c4a-7b3e-9d2f-0123456789ab', '0189f7c0-8c4a-7b3e-9d2f-0123456789ab'],
    ['0189F7C08C4A7B3E9D2F0123456789AB', '0189f7c0-8c4a-7b3e-9d2f-0123456789ab'],
    ['{0189f7c0-8c4a-7b3e-9d2f-0123456789ab}', '0189f7c0-8c4a-7b3e-9d2f-0123456789ab'],
    ['urn:uuid:0189f7c0-8c4a-7b3e-9d2f-0123456789ab', '0189f7c0-8c4a-7b3e-9d2f-0123456789ab'],
  ])('reads %s', (input, expected) => {
    expect(normalizeUuid(input)).toBe(expected);
  });

  it.each([
    '',
    'x',
    '0189f7c0-8c4a-7b3e-9d2f-0123456789a',
    '0189f7c0_8c4a_7b3e_9d2f_0123456789ab',
    'u'.repeat(1e6),
  ])('refuses %s', (input) => {
    expect(normalizeUuid(input)).toBeNull();
  });
});

describe('normalizeBatch', () => {
  it('ingests the valid events of a batch in order and reports the others by index', () => {
    const parsed = parseBatch({
      api_key: token,
      batch: [
        { event: 'first', distinct_id: '1' },
        { event: 'no distinct id' },
        { distinct_id: '1' },
        { event: 'second', properties: { distinct_id: '2' } },
        { event: '$performance_event', distinct_id: '1' },
        7,
      ],
    });
    const result = normalizeBatch(parsed, capture);
    expect(result.accepted.map((event) => [event.event, event.distinct_id])).toEqual([
      ['first', '1'],
      ['second', '2'],
    ]);
    expect(result.dropped.map(({ index, reason }) => [index, reason])).toEqual([
      [1, 'missing_distinct_id'],
      [2, 'missing_event_name'],
      [4, 'performance_event'],
      [5, 'not_an_object'],
    ]);
  });

  it('accepts nothing, without an error, when every event is dropped', () => {
    const result = normalizeBatch(batchOf([{ event: 'a' }]), capture);
    expect(result.accepted).toEqual([]);
    expect(result.dropped).toHaveLength(1);
  });
});

describe('normalizeEvent: text that is not valid UTF-16', () => {
  const parsed = (json: string) => JSON.parse(json) as unknown;

  it('turns a lone surrogate in the event name into U+FFFD and keeps the event', () => {
    const event = accepted(parsed('{"event": "\\ud800", "distinct_id": "user-1"}'));
    expect(event.event).toBe('\uFFFD');
    expect(JSON.parse(event.data).event).toBe('\uFFFD');
    expect(event.data).not.toContain('\\ud800');
  });

  it('fixes lone surrogates in distinct ids, property keys and nested values', () => {
    const event = accepted(
      parsed(
        '{"event": "e", "distinct_id": "a\\udc00b", "properties": {"k\\ud801": ["x\\udfff", {"y": "\\ud83d"}]}}',
      ),
    );
    expect(event.distinct_id).toBe('a\uFFFDb');
    expect(JSON.parse(event.data).properties).toEqual({ 'k\uFFFD': ['x\uFFFD', { y: '\uFFFD' }] });
  });

  it('leaves valid surrogate pairs and escaped backslashes as they are', () => {
    const raw = parsed(
      '{"event": "\\ud83d\\ude00", "distinct_id": "u", "properties": {"path": "C:\\\\ud800"}}',
    );
    const event = accepted(raw);
    expect(event.event).toBe('😀');
    expect(JSON.parse(event.data).properties.path).toBe('C:\\ud800');
  });

  it('keeps the rest of a batch when one event has a lone surrogate', () => {
    const { accepted: kept, dropped } = normalizeBatch(
      batchOf([
        { event: 'first', distinct_id: 'u' },
        parsed('{"event": "\\udbff", "distinct_id": "u"}'),
        { event: 'third', distinct_id: 'u' },
      ]),
      capture,
    );
    expect(dropped).toEqual([]);
    expect(kept.map((event) => event.event)).toEqual(['first', '\uFFFD', 'third']);
  });
});

import type { CapturedEvent } from '@hogbase/event-contract';
import { isParsedEvent, ParsedEvent, parseCapturedEvent } from './parse-captured-event.util';

function capturedEvent(
  overrides: Partial<CapturedEvent> = {},
  raw: Record<string, unknown> = {},
): CapturedEvent {
  return {
    uuid: '0190a6b2-0000-7000-8000-000000000001',
    distinct_id: 'user-1',
    ip: null,
    data: JSON.stringify({ event: 'clicked', distinct_id: 'user-1', properties: {}, ...raw }),
    now: '2024-03-01T12:00:00.000Z',
    sent_at: null,
    token: 'phc_x',
    team_id: 3,
    event: 'clicked',
    timestamp: '2024-03-01T11:59:59.123456Z',
    ...overrides,
  };
}

function parsedOk(captured: CapturedEvent): ParsedEvent {
  const result = parseCapturedEvent(captured);
  if (!isParsedEvent(result)) throw new Error(`rejected: ${JSON.stringify(result)}`);
  return result;
}

describe('parseCapturedEvent', () => {
  it('takes the name, distinct id and timestamp from capture, the properties from the raw event', () => {
    const event = parsedOk(
      capturedEvent({ event: 'renamed' }, { event: 'original', distinct_id: 'other', properties: { a: 1 } }),
    );
    expect(event).toMatchObject({
      uuid: '0190a6b2-0000-7000-8000-000000000001',
      teamId: 3,
      distinctId: 'user-1',
      event: 'renamed',
      timestamp: '2024-03-01T11:59:59.123456Z',
      timestampMs: Date.parse('2024-03-01T11:59:59.123Z'),
      properties: { a: 1 },
      processPerson: true,
      warnings: [],
    });
  });

  it('folds top-level $set and $set_once into the properties, top level winning', () => {
    const event = parsedOk(
      capturedEvent(
        {},
        { properties: { $set: { a: 'inner', b: 1 } }, $set: { a: 'top' }, $set_once: { c: 1 } },
      ),
    );
    expect(event.properties).toEqual({ $set: { a: 'top', b: 1 }, $set_once: { c: 1 } });
  });

  it('truncates the event name to 200 characters', () => {
    expect(parsedOk(capturedEvent({ event: 'e'.repeat(300) })).event).toHaveLength(200);
  });

  it('falls back to capture’s now, with a warning, for an unusable timestamp', () => {
    for (const timestamp of ['yesterday', '10000-01-01T00:00:00Z', '1900-01-01T00:00:00Z']) {
      const event = parsedOk(capturedEvent({ timestamp }));
      expect(event.timestamp).toBe('2024-03-01T12:00:00.000Z');
      expect(event.warnings).toEqual([{ type: 'ignored_invalid_timestamp', details: { timestamp } }]);
    }
  });

  it('disables person processing only for exactly false, stripping person and group properties', () => {
    const event = parsedOk(
      capturedEvent(
        {},
        {
          properties: {
            $process_person_profile: false,
            $set: { a: 1 },
            $unset: ['b'],
            $group_0: 'x',
            $browser: 'Chrome',
          },
          $set_once: { c: 1 },
        },
      ),
    );
    expect(event.processPerson).toBe(false);
    expect(event.properties).toEqual({ $process_person_profile: false, $browser: 'Chrome' });

    const notBoolean = parsedOk(capturedEvent({}, { properties: { $process_person_profile: 0 } }));
    expect(notBoolean.processPerson).toBe(true);
    expect(notBoolean.properties).toEqual({});
    expect(notBoolean.warnings[0].type).toBe('invalid_process_person_profile');
  });

  it('drops identity events sent without person processing', () => {
    for (const name of ['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']) {
      expect(
        parseCapturedEvent(
          capturedEvent({ event: name }, { properties: { $process_person_profile: false } }),
        ),
      ).toMatchObject({ outcome: 'dropped', reason: 'invalid_event_when_process_person_profile_is_false' });
    }
  });

  it('strips person updates from $groupidentify and drops one with a key over 400 characters', () => {
    const event = parsedOk(
      capturedEvent(
        { event: '$groupidentify' },
        { properties: { $group_type: 'company', $group_key: 'acme', $set: { a: 1 }, $current_url: '/' } },
      ),
    );
    expect(event.properties).toEqual({ $group_type: 'company', $group_key: 'acme', $current_url: '/' });
    expect(
      parseCapturedEvent(
        capturedEvent(
          { event: '$groupidentify' },
          { properties: { $group_type: 'company', $group_key: 'k'.repeat(401) } },
        ),
      ),
    ).toMatchObject({ outcome: 'dropped', reason: 'group_key_too_long' });
  });

  it('records when a survey was last seen on the person', () => {
    const event = parsedOk(capturedEvent({ event: 'survey shown' }, { properties: { $survey_id: 's' } }));
    expect(event.properties.$set).toEqual({ $survey_last_seen_date: '2024-03-01T11:59:59.123456Z' });
  });

  it.each([
    [{ data: 'not json' }, 'invalid_event_data'],
    [{ data: '[1,2]' }, 'invalid_event_data'],
    [{ data: JSON.stringify({ properties: 'a=1' }) }, 'invalid_properties'],
    [{ uuid: 'nope' }, 'invalid_captured_event'],
    [{ team_id: 0 }, 'invalid_captured_event'],
    [{ team_id: 1.5 }, 'invalid_captured_event'],
    [{ event: '' }, 'invalid_captured_event'],
    [{ distinct_id: '' }, 'invalid_distinct_id'],
    [{ distinct_id: 'x'.repeat(401) }, 'invalid_distinct_id'],
  ] as const)('dead-letters %j as %s', (overrides, reason) => {
    expect(parseCapturedEvent(capturedEvent(overrides as Partial<CapturedEvent>))).toMatchObject({
      outcome: 'dead_letter',
      reason,
    });
  });

  it('never throws, whatever the message holds', () => {
    for (const value of [null, undefined, 42, 'text', [], {}, { uuid: 1, team_id: '1' }]) {
      expect(parseCapturedEvent(value as unknown as CapturedEvent)).toMatchObject({ outcome: 'dead_letter' });
    }
  });
});

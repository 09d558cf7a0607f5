import { partitionKey, toQueueMessage, type CapturedEvent } from './captured-event.util';

describe('toQueueMessage', () => {
  const event: CapturedEvent = {
    uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    distinct_id: 'user:1',
    ip: null,
    data: '{"event":"signed up"}',
    now: '2026-11-22T06:00:00.000Z',
    sent_at: null,
    token: 'phc_x',
    team_id: 7,
    event: 'signed up',
    timestamp: '2026-11-22T05:59:59.123456Z',
    historical_migration: true,
  };

  it("keys by project and distinct id so one person's events stay in one partition, in order", () => {
    expect(partitionKey(7, 'user:1')).toBe('7:user:1');
    expect(toQueueMessage(event).key).toBe('7:user:1');
  });

  it('carries the event as JSON and PostHog headers, the timestamp in epoch milliseconds', () => {
    const message = toQueueMessage(event);
    expect(JSON.parse(message.value)).toEqual(event);
    expect(message.headers).toEqual({
      token: 'phc_x',
      distinct_id: 'user:1',
      uuid: event.uuid,
      event: 'signed up',
      timestamp: String(Date.parse('2026-11-22T05:59:59.123Z')),
      now: event.now,
      historical_migration: 'true',
    });
  });
});

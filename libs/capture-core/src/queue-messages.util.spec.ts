import { queueMessageBytes, toQueueMessage, type CapturedEvent } from '@hogbase/event-contract';
import { EventTooLargeError } from './capture.errors';
import { toQueueMessages } from './queue-messages.util';

function event(text: string): CapturedEvent {
  return {
    uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    distinct_id: 'user-1',
    ip: null,
    data: JSON.stringify({ event: 'big', distinct_id: 'user-1', properties: { text } }),
    now: '2026-01-01T00:00:00.000Z',
    sent_at: null,
    token: 'phc_token',
    team_id: 1,
    event: 'big',
    timestamp: '2026-01-01T00:00:00.000Z',
  };
}

describe('toQueueMessages', () => {
  it('takes a message of exactly the limit and refuses one byte more, counting UTF-8 and escapes', () => {
    for (const character of ['x', 'é', '"', '\u2028']) {
      const base = queueMessageBytes(toQueueMessage(event('')));
      const perCharacter = queueMessageBytes(toQueueMessage(event(character))) - base;
      const count = 5_000;
      const limit = base + count * perCharacter;
      expect(toQueueMessages([event(character.repeat(count))], limit)).toHaveLength(1);
      expect(() => toQueueMessages([event(character.repeat(count))], limit - 1)).toThrow(EventTooLargeError);
    }
  });

  it('refuses the whole request for one event past 1,000,000 bytes by default', () => {
    const small = event('fine');
    const large = event('"'.repeat(400_000)); // 400 KB as sent, 800 KB escaped, twice in the message
    expect(() => toQueueMessages([small, large, small])).toThrow(
      expect.objectContaining({ status: 413, code: 'event_too_large' }) as Error,
    );
    expect(toQueueMessages([small, small])).toHaveLength(2);
  });
});

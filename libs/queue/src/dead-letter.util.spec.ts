import { queueMessageBytes } from '@hogbase/event-contract';
import {
  DEAD_LETTER_HEAD_BYTES,
  DEAD_LETTER_MESSAGE_BYTES_HEADER,
  DEAD_LETTER_REASON_HEADER,
  DEAD_LETTER_SOURCE_OFFSET_HEADER,
  DEAD_LETTER_SOURCE_PARTITION_HEADER,
  DEAD_LETTER_SOURCE_TOPIC_HEADER,
  DEAD_LETTER_TRUNCATED_HEADER,
  DEAD_LETTER_VALUE_BYTES_HEADER,
  DEFAULT_DEAD_LETTER_MAX_BYTES,
  toDeadLetter,
  utf8Head,
} from './dead-letter.util';

const source = { topic: 'events_plugin_ingestion', partition: 3, offset: '42' };

describe('toDeadLetter', () => {
  it('copies a message whole, with the reason and where it was read', () => {
    const copy = toDeadLetter(
      { key: '1:user', value: '{not json', headers: { token: 'phc_x' } },
      'invalid_json',
      source,
    );
    expect(copy).toEqual({
      key: '1:user',
      value: '{not json',
      headers: expect.objectContaining({
        token: 'phc_x',
        [DEAD_LETTER_REASON_HEADER]: 'invalid_json',
        [DEAD_LETTER_SOURCE_TOPIC_HEADER]: 'events_plugin_ingestion',
        [DEAD_LETTER_SOURCE_PARTITION_HEADER]: '3',
        [DEAD_LETTER_SOURCE_OFFSET_HEADER]: '42',
      }) as unknown,
    });
    expect(copy.headers).not.toHaveProperty(DEAD_LETTER_TRUNCATED_HEADER);
  });

  it('bounds the copy of a message under the broker limit whose whole copy the producer would refuse', () => {
    // About 1.04 MB: under the broker's 1 MiB + 12 bytes, over the producer's 1,000,000.
    const value = `{"event": "${'é'.repeat(520_000)}`;
    const message = { key: '1:poison', value, headers: { token: 'phc_x' } };
    const copy = toDeadLetter(message, 'invalid_json: the message is not a JSON object', source);

    expect(queueMessageBytes(copy)).toBeLessThanOrEqual(DEFAULT_DEAD_LETTER_MAX_BYTES);
    expect(value.startsWith(copy.value)).toBe(true);
    expect(Buffer.byteLength(copy.value)).toBeGreaterThan(DEAD_LETTER_HEAD_BYTES - 4);
    expect(Buffer.byteLength(copy.value)).toBeLessThanOrEqual(DEAD_LETTER_HEAD_BYTES);
    expect(copy.key).toBe('1:poison');
    expect(copy.headers).toEqual(
      expect.objectContaining({
        token: 'phc_x',
        [DEAD_LETTER_TRUNCATED_HEADER]: 'true',
        [DEAD_LETTER_VALUE_BYTES_HEADER]: String(Buffer.byteLength(value)),
        [DEAD_LETTER_REASON_HEADER]: 'invalid_json: the message is not a JSON object',
        [DEAD_LETTER_SOURCE_PARTITION_HEADER]: '3',
        [DEAD_LETTER_SOURCE_OFFSET_HEADER]: '42',
      }) as unknown,
    );
    // The size of the whole copy, which was too large.
    expect(Number(copy.headers?.[DEAD_LETTER_MESSAGE_BYTES_HEADER])).toBeGreaterThan(
      DEFAULT_DEAD_LETTER_MAX_BYTES,
    );
  });

  it('keeps within a small bound, leaving out the key, headers and value the bound has no room for', () => {
    const message = {
      key: `1:${'k'.repeat(5_000)}`,
      value: 'v'.repeat(100_000),
      headers: { big: 'h'.repeat(10_000) },
    };
    const copy = toDeadLetter(message, 'too large for the dead-letter topic', source, 4_096);
    expect(queueMessageBytes(copy)).toBeLessThanOrEqual(4_096);
    expect(copy.headers).not.toHaveProperty('big');
    expect(copy.key).toHaveLength(1_024);
    expect(message.value.startsWith(copy.value)).toBe(true);
    expect(copy.headers?.[DEAD_LETTER_VALUE_BYTES_HEADER]).toBe('100000');
  });
});

describe('utf8Head', () => {
  it('cuts before a character it cannot keep whole', () => {
    expect(utf8Head('aé€😀', 3)).toBe('aé');
    expect(utf8Head('aé€😀', 6)).toBe('aé€');
    expect(utf8Head('aé€😀', 9)).toBe('aé€');
    expect(utf8Head('aé€😀', 10)).toBe('aé€😀');
    expect(utf8Head('abc', 0)).toBe('');
  });
});

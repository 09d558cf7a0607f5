import { gzipSync } from 'node:zlib';

import LZString from 'lz-string';

import { parseBatch } from './batch-parser.util';
import { CaptureError, PayloadTooLargeError } from './capture.errors';
import { normalizeBatch, type NormalizedBatch } from './event-normalizer.util';
import { decodePayload, type RawCaptureRequest } from './payload-decoder.util';
import { toQueueMessages } from './queue-messages.util';

/**
 * The corpus of hostile bodies: every one must end as a typed 4xx error or as events accepted or
 * dropped, never as an uncaught exception (which the capture app would turn into a 5xx).
 */

type Outcome = { status: number; error: CaptureError } | { status: 200; batch: NormalizedBatch };

const token = 'phc_project_token';
const now = new Date('2023-01-01T12:00:00.000Z');

function run(request: Partial<RawCaptureRequest>, maxDecodedBytes?: number): Outcome {
  const full: RawCaptureRequest = { body: Buffer.alloc(0), query: {}, ...request };
  try {
    const payload = decodePayload(full, { maxDecodedBytes });
    const parsed = parseBatch(payload, full.query);
    const batch = normalizeBatch(parsed, { teamId: 1, ip: null, now });
    toQueueMessages(batch.accepted);
    return { status: 200, batch };
  } catch (error) {
    // Anything but a CaptureError fails the test here, with its stack.
    if (!(error instanceof CaptureError)) throw error;
    return { status: error.status, error };
  }
}

function json(value: unknown): Partial<RawCaptureRequest> {
  return { body: Buffer.from(JSON.stringify(value)), contentType: 'application/json' };
}

function expectClientErrorOrHandled(outcome: Outcome): void {
  expect([200, 400, 401, 413]).toContain(outcome.status);
}

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const validBatch = {
  api_key: token,
  sent_at: '2023-01-01T12:00:05Z',
  batch: [
    {
      event: '$pageview',
      distinct_id: 'u1',
      properties: { $current_url: 'https://a.test/' },
      timestamp: '2023-01-01T11:59:00Z',
    },
    { event: 'clicked', distinct_id: 'u2', uuid: '0189f7c0-8c4a-7b3e-9d2f-0123456789ab' },
  ],
};

describe('malformed payloads', () => {
  it('truncated JSON: every prefix of a valid batch answers 400', () => {
    const text = JSON.stringify(validBatch);
    for (let length = 1; length < text.length; length++) {
      const outcome = run({ body: Buffer.from(text.slice(0, length)) });
      expect(outcome.status).toBe(400);
    }
    expect(run({ body: Buffer.from(text) }).status).toBe(200);
  });

  it('truncated gzip: every prefix of a gzipped batch answers 400', () => {
    const body = gzipSync(JSON.stringify(validBatch));
    for (let length = 1; length < body.length; length++) {
      expect(run({ body: body.subarray(0, length), contentEncoding: 'gzip' }).status).toBe(400);
    }
  });

  describe('wrong types', () => {
    const cases: Array<[string, unknown, number]> = [
      ['a number as the body', 42, 400],
      ['a string as the body', 'event', 400],
      ['null as the body', null, 400],
      ['batch as an object', { api_key: token, batch: { event: 'a' } }, 400],
      ['batch as a string', { api_key: token, batch: 'events' }, 400],
      ['api_key as an object', { api_key: { token }, batch: [{ event: 'a', distinct_id: '1' }] }, 401],
      ['api_key as a number', { api_key: 5, batch: [{ event: 'a', distinct_id: '1' }] }, 401],
      ['events as numbers', { api_key: token, batch: [1, 2, 3] }, 200],
      ['events as arrays', { api_key: token, batch: [[{ event: 'a' }]] }, 200],
      [
        'properties as a string',
        { api_key: token, batch: [{ event: 'a', distinct_id: '1', properties: 'p' }] },
        200,
      ],
      [
        'properties as an array',
        { api_key: token, batch: [{ event: 'a', distinct_id: '1', properties: [1] }] },
        200,
      ],
      ['distinct_id as an array', { api_key: token, batch: [{ event: 'a', distinct_id: [1, 2] }] }, 200],
      [
        'timestamp as an object',
        { api_key: token, batch: [{ event: 'a', distinct_id: '1', timestamp: {} }] },
        200,
      ],
      ['offset as a string', { api_key: token, batch: [{ event: 'a', distinct_id: '1', offset: 'x' }] }, 200],
      ['uuid as a number', { api_key: token, batch: [{ event: 'a', distinct_id: '1', uuid: 1 }] }, 200],
      [
        'sent_at as an object',
        { api_key: token, sent_at: {}, batch: [{ event: 'a', distinct_id: '1' }] },
        200,
      ],
      ['event name as an object', { api_key: token, batch: [{ event: {}, distinct_id: '1' }] }, 200],
      ['an event without its token', [{ event: 'a', distinct_id: '1' }], 401],
      [
        '__proto__ keys',
        JSON.parse(`{"api_key":"${token}","batch":[{"__proto__":{"event":"x"},"distinct_id":"1"}]}`),
        200,
      ],
    ];
    it.each(cases)('%s', (_what, payload, status) => {
      const outcome = run(json(payload));
      expect(outcome.status).toBe(status);
    });

    it('ingests nothing from elements that are not events, and says why', () => {
      const outcome = run(
        json({ api_key: token, batch: [1, 'a', null, [], { event: 'ok', distinct_id: '1' }] }),
      );
      expect(outcome).toMatchObject({ status: 200 });
      if (!('batch' in outcome)) return;
      expect(outcome.batch.accepted).toHaveLength(1);
      expect(outcome.batch.dropped.map((dropped) => dropped.reason)).toEqual(Array(4).fill('not_an_object'));
    });
  });

  describe('deep nesting (100,000 levels)', () => {
    const depth = 100_000;
    const arrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const objects = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

    it('as the whole body: no token found in it, 401', () => {
      expect(run({ body: Buffer.from(arrays) }).status).toBe(401);
      expect(run({ body: Buffer.from(objects) }).status).toBe(401);
    });

    it('as a single event with a token: 400, as rust/capture (serde_json recursion limit)', () => {
      const body = `{"event":"deep","distinct_id":"1","token":"${token}","a":${objects}}`;
      expect(run({ body: Buffer.from(body) })).toMatchObject({ status: 400 });
    });

    it('inside one event of a batch: 400 for the whole request, nothing accepted', () => {
      const body = `{"api_key":"${token}","batch":[{"event":"deep","distinct_id":"1","properties":{"p":${objects}}},{"event":"flat","distinct_id":"1"}]}`;
      expect(run({ body: Buffer.from(body) })).toMatchObject({ status: 400 });
    });

    it('as the distinct_id', () => {
      const body = `[{"event":"a","token":"${token}","distinct_id":${arrays}}]`;
      expect(run({ body: Buffer.from(body) })).toMatchObject({ status: 400 });
    });
  });

  describe('huge strings (10 MB)', () => {
    const huge = 'x'.repeat(10_000_000);

    it.each([
      ['event name', { event: huge, distinct_id: '1' }],
      ['property value', { event: 'a', distinct_id: '1', properties: { p: huge } }],
      ['uuid', { event: 'a', distinct_id: '1', uuid: huge }],
      ['timestamp', { event: 'a', distinct_id: '1', timestamp: huge }],
    ])('as the %s: 413 for the whole request, as rust/capture', (_what, event) => {
      const outcome = run(json({ api_key: token, batch: [event, { event: 'small', distinct_id: '1' }] }));
      expect(outcome).toMatchObject({ status: 413, error: { code: 'event_too_large' } });
    });

    it('as the distinct_id: cut to 200 characters when the event fits', () => {
      const outcome = run(
        json({ api_key: token, batch: [{ event: 'a', distinct_id: 'y'.repeat(500_000) }] }),
      );
      expect(outcome).toMatchObject({ status: 200 });
      if ('batch' in outcome) expect(outcome.batch.accepted[0]?.distinct_id).toHaveLength(200);
    });

    it('as the token: 401', () => {
      expect(run(json({ api_key: huge, batch: [{ event: 'a', distinct_id: '1' }] })).status).toBe(401);
    });

    it('as the sent_at: ignored', () => {
      expect(
        run(json({ api_key: token, sent_at: huge, batch: [{ event: 'a', distinct_id: '1' }] })).status,
      ).toBe(200);
    });

    it('as a base64 body that is not base64 past its start: 400', () => {
      expect(run({ body: Buffer.from(`${'QUFB'.repeat(2_500_000)}!`) }).status).toBe(400);
    });
  });

  describe('invalid UTF-8', () => {
    it('is replaced inside strings, and the event ingested', () => {
      const body = Buffer.concat([
        Buffer.from(`{"api_key":"${token}","batch":[{"event":"a`),
        Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf8, 0x88, 0x80, 0x80, 0x80]),
        Buffer.from('","distinct_id":"1"}]}'),
      ]);
      const outcome = run({ body });
      expect(outcome.status).toBe(200);
      if ('batch' in outcome) expect(outcome.batch.accepted[0]?.event).toMatch(/^a\uFFFD+$/);
    });

    it('in the token makes a 401, in the structure a 400', () => {
      const badToken = Buffer.concat([
        Buffer.from('{"api_key":"phc_'),
        Buffer.from([0xff]),
        Buffer.from('","batch":[{}]}'),
      ]);
      expect(run({ body: badToken }).status).toBe(401);
      expect(run({ body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }).status).toBe(400);
    });

    it('keeps lone surrogates from JSON escapes without failing', () => {
      const body = `{"api_key":"${token}","batch":[{"event":"\\ud800","distinct_id":"\\udfff"}]}`;
      const outcome = run({ body: Buffer.from(body) });
      expect(outcome.status).toBe(200);
    });
  });

  describe('decompression bombs', () => {
    it('a gzip bomb of 1 GB of zeros answers 413 at the default 100 MiB bound', () => {
      // Concatenated gzip members are one valid gzip stream (RFC 1952); 64 x 16 MiB = 1 GiB.
      const member = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
      const bomb = Buffer.concat(Array<Buffer>(64).fill(member));
      expect(bomb.length).toBeLessThan(2_000_000);
      const outcome = run({ body: bomb, contentEncoding: 'gzip' });
      expect(outcome.status).toBe(413);
      if ('error' in outcome) expect(outcome.error).toBeInstanceOf(PayloadTooLargeError);
    });

    it('an lz-string bomb answers 413', () => {
      const bomb = LZString.compressToBase64(' '.repeat(200_000));
      expect(run({ body: Buffer.from(bomb), query: { compression: 'lz64' } }, 100_000).status).toBe(413);
    });
  });

  describe('random input (deterministic seeds)', () => {
    const contentTypes = [undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded'];
    const encodings = [undefined, 'gzip', 'deflate'];
    const compressions = [undefined, 'gzip-js', 'lz64', 'base64', 'nonsense'];

    it('random bytes under every header combination', () => {
      const next = random(1);
      for (let round = 0; round < 1_500; round++) {
        const body = Buffer.alloc(Math.floor(next() * 300));
        for (let index = 0; index < body.length; index++) body[index] = Math.floor(next() * 256);
        const pick = <T>(values: T[]): T => values[Math.floor(next() * values.length)];
        const compression = pick(compressions);
        expectClientErrorOrHandled(
          run({
            body,
            contentType: pick(contentTypes),
            contentEncoding: pick(encodings),
            query: compression ? { compression } : {},
          }),
        );
      }
    });

    it('random printable text, in the body and in ?data=', () => {
      const next = random(2);
      const alphabet = '{}[]":,0123456789abcdefABCDEF+/= \\nultrefalse-.eE';
      for (let round = 0; round < 1_500; round++) {
        let text = '';
        const length = Math.floor(next() * 200);
        for (let index = 0; index < length; index++) text += alphabet[Math.floor(next() * alphabet.length)];
        expectClientErrorOrHandled(run({ body: Buffer.from(text) }));
        expectClientErrorOrHandled(
          run({ query: { data: text, compression: next() < 0.3 ? 'lz64' : undefined } }),
        );
      }
    });

    it('a valid gzipped batch with random bytes changed', () => {
      const next = random(3);
      const original = gzipSync(JSON.stringify(validBatch));
      for (let round = 0; round < 1_500; round++) {
        const body = Buffer.from(original);
        const flips = 1 + Math.floor(next() * 4);
        for (let flip = 0; flip < flips; flip++)
          body[Math.floor(next() * body.length)] = Math.floor(next() * 256);
        expectClientErrorOrHandled(run({ body, contentEncoding: 'gzip' }));
      }
    });

    it('a valid JSON batch with random characters changed', () => {
      const next = random(4);
      const original = JSON.stringify(validBatch);
      const replacements = '{}[]":,0-1 aZ\\\u0000é';
      for (let round = 0; round < 3_000; round++) {
        const characters = original.split('');
        const changes = 1 + Math.floor(next() * 3);
        for (let change = 0; change < changes; change++) {
          characters[Math.floor(next() * characters.length)] =
            replacements[Math.floor(next() * replacements.length)] ?? '';
        }
        expectClientErrorOrHandled(run({ body: Buffer.from(characters.join('')) }));
      }
    });
  });
});

import { gzipSync } from 'node:zlib';

import LZString from 'lz-string';

import { PayloadInvalidError, PayloadTooLargeError } from './capture.errors';
import { decodePayload, type RawCaptureRequest } from './payload-decoder.util';

const events = [
  { event: '$pageview', distinct_id: 'user-1', properties: { $current_url: 'https://a.test/?q=1+2' } },
];
const json = JSON.stringify(events);

function decode(request: Partial<RawCaptureRequest>, maxDecodedBytes?: number): unknown {
  return decodePayload({ body: Buffer.alloc(0), query: {}, ...request }, { maxDecodedBytes });
}

function form(fields: Record<string, string>): Buffer {
  return Buffer.from(new URLSearchParams(fields).toString());
}

function captureError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('decodePayload', () => {
  it('parses a plain JSON body', () => {
    expect(decode({ body: Buffer.from(json), contentType: 'application/json' })).toEqual(events);
  });

  it('drops a UTF-8 byte order mark', () => {
    expect(decode({ body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]) })).toEqual(
      events,
    );
  });

  describe('gzip', () => {
    const gzipped = gzipSync(json);

    it('inflates by Content-Encoding: gzip', () => {
      expect(decode({ body: gzipped, contentEncoding: 'gzip', contentType: 'application/json' })).toEqual(
        events,
      );
    });

    it.each(['gzip', 'gzip-js', 'GZIP-JS'])('inflates by ?compression=%s', (compression) => {
      expect(decode({ body: gzipped, query: { compression } })).toEqual(events);
    });

    it('inflates by the magic bytes alone (posthog-js sends text/plain without a hint)', () => {
      expect(decode({ body: gzipped, contentType: 'text/plain' })).toEqual(events);
    });

    it('reads a body that is not gzip despite a gzip hint as it is', () => {
      expect(decode({ body: Buffer.from(json), contentEncoding: 'gzip' })).toEqual(events);
    });

    it('inflates gzip inside a form field (base64)', () => {
      const body = form({ data: gzipped.toString('base64'), compression: 'gzip-js' });
      expect(decode({ body, contentType: 'application/x-www-form-urlencoded' })).toEqual(events);
    });

    it('inflates base64 gzip sent as the body', () => {
      expect(decode({ body: Buffer.from(gzipped.toString('base64')) })).toEqual(events);
    });

    it('answers 400 for corrupt gzip and for truncated gzip', () => {
      const corrupt = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), Buffer.from('not deflate at all')]);
      for (const body of [corrupt, gzipped.subarray(0, gzipped.length - 10)]) {
        const error = captureError(() => decode({ body }));
        expect(error).toBeInstanceOf(PayloadInvalidError);
        expect(error).toMatchObject({ status: 400, code: 'invalid_payload' });
        expect((error as Error).message).toMatch(/^failed to decode request: gzip/);
      }
    });

    it('answers 413 as soon as the inflated size passes the bound, and accepts exactly the bound', () => {
      const body = gzipSync(Buffer.alloc(10_000, 0x20));
      const error = captureError(() => decode({ body }, 9_999));
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect(error).toMatchObject({ status: 413, code: 'payload_too_large' });
      // 10,000 spaces are within a 10,000-byte bound (and then not JSON).
      expect(captureError(() => decode({ body }, 10_000))).toBeInstanceOf(PayloadInvalidError);
    });
  });

  describe('base64', () => {
    it('decodes a body that is strict base64', () => {
      expect(decode({ body: Buffer.from(Buffer.from(json).toString('base64')) })).toEqual(events);
    });

    it('decodes by ?compression=base64', () => {
      expect(
        decode({ body: Buffer.from(Buffer.from(json).toString('base64')), query: { compression: 'b64' } }),
      ).toEqual(events);
    });

    it('decodes a payload base64-encoded twice (legacy clients)', () => {
      const twice = Buffer.from(Buffer.from(json).toString('base64')).toString('base64');
      expect(decode({ body: Buffer.from(twice) })).toEqual(events);
    });

    it('keeps a body that only looks like base64 at its start, and then fails on it as JSON', () => {
      const body = Buffer.from(`${'A'.repeat(200)}!!!!`);
      expect(captureError(() => decode({ body }))).toMatchObject({ status: 400 });
    });
  });

  describe('lz-string', () => {
    const compressed = LZString.compressToBase64(json);

    it.each(['lz64', 'lz-string'])('decompresses by ?compression=%s', (compression) => {
      expect(decode({ body: Buffer.from(compressed), query: { compression } })).toEqual(events);
    });

    it('decompresses a form field with compression=lz64, with or without URL-encoding of +', () => {
      const encoded = form({ data: compressed, compression: 'lz64' });
      expect(decode({ body: encoded, contentType: 'application/x-www-form-urlencoded' })).toEqual(events);
      const raw = Buffer.from(`data=${compressed}&compression=lz64`);
      expect(decode({ body: raw, contentType: 'application/x-www-form-urlencoded; charset=UTF-8' })).toEqual(
        events,
      );
    });

    it('answers 413 for an lz-string bomb', () => {
      const bomb = LZString.compressToBase64(`[${'1,'.repeat(100_000)}1]`);
      expect(
        captureError(() => decode({ body: Buffer.from(bomb), query: { compression: 'lz64' } }, 50_000)),
      ).toBeInstanceOf(PayloadTooLargeError);
    });

    it('answers 400 for data that is not lz-string', () => {
      const error = captureError(() => decode({ body: Buffer.from('////'), query: { compression: 'lz64' } }));
      expect(error).toBeInstanceOf(PayloadInvalidError);
    });

    it('reads JSON sent with an lz64 hint as JSON', () => {
      expect(decode({ body: Buffer.from(json), query: { compression: 'lz64' } })).toEqual(events);
    });
  });

  describe('forms and the data query parameter', () => {
    const contentType = 'application/x-www-form-urlencoded';

    it('reads data= as URL-encoded JSON', () => {
      expect(decode({ body: form({ data: json }), contentType })).toEqual(events);
    });

    it('reads data= as base64, turning spaces back into +', () => {
      const base64 = Buffer.from(JSON.stringify([{ event: '>>>?', distinct_id: '~~~' }])).toString('base64');
      expect(base64).toContain('+');
      expect(decode({ body: Buffer.from(`data=${base64}&ver=1.2.3`), contentType })).toEqual([
        { event: '>>>?', distinct_id: '~~~' },
      ]);
    });

    it('reads a JSON body sent with the form content type', () => {
      expect(decode({ body: Buffer.from(json), contentType })).toEqual(events);
    });

    it('answers 400 for a form without data', () => {
      const error = captureError(() => decode({ body: Buffer.from('ver=1&ip=1'), contentType }));
      expect(error).toBeInstanceOf(PayloadInvalidError);
      expect((error as Error).message).toBe('expected form data in request payload');
    });

    it('reads the legacy ?data= parameter (JSON or base64) before the body', () => {
      expect(decode({ query: { data: json } })).toEqual(events);
      expect(
        decode({ query: { data: Buffer.from(json).toString('base64') }, body: Buffer.from('ignored') }),
      ).toEqual(events);
      expect(decode({ query: { data: [json, 'second'] } })).toEqual(events);
    });
  });

  describe('bad input', () => {
    it('answers 400 no_data for an empty body without ?data=', () => {
      expect(captureError(() => decode({ query: { data: '' } }))).toMatchObject({
        status: 400,
        code: 'no_data',
        message: 'request missing data payload',
      });
    });

    it('answers 400 for invalid JSON, with a short detail', () => {
      const error = captureError(() =>
        decode({ body: Buffer.from(`{"event": "x", ${'"a": 1, '.repeat(10_000)}`) }),
      );
      expect(error).toBeInstanceOf(PayloadInvalidError);
      expect((error as PayloadInvalidError).toBody()).toMatchObject({
        type: 'validation_error',
        code: 'invalid_payload',
        attr: null,
      });
      expect((error as Error).message.length).toBeLessThan(300);
    });

    it('replaces invalid UTF-8 with U+FFFD instead of failing', () => {
      const body = Buffer.concat([
        Buffer.from('{"event":"a'),
        Buffer.from([0xff, 0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
      expect(decode({ body })).toEqual({ event: 'a\uFFFD\uFFFD(' });
    });

    it('refuses a bound that is not a positive integer (a programming error, not a client one)', () => {
      for (const bound of [0, -1, 1.5, Number.NaN]) {
        expect(() => decode({ body: Buffer.from(json) }, bound)).toThrow(RangeError);
      }
    });

    it('answers 413 for an uncompressed body over the bound', () => {
      expect(captureError(() => decode({ body: Buffer.from(json) }, 10))).toBeInstanceOf(
        PayloadTooLargeError,
      );
    });
  });
});

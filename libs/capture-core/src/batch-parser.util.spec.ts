import { parseBatch } from './batch-parser.util';
import {
  InvalidTokenError,
  MultipleTokensError,
  NoTokenError,
  PayloadInvalidError,
  type CaptureError,
} from './capture.errors';
import { formatInstant } from './timestamp.util';

const token = 'phc_project_token';

function failure(run: () => unknown): CaptureError {
  try {
    run();
  } catch (error) {
    return error as CaptureError;
  }
  throw new Error('expected an error');
}

describe('parseBatch', () => {
  describe('shapes', () => {
    it('reads the batch object', () => {
      const batch = [{ event: 'a', distinct_id: '1' }];
      const parsed = parseBatch({
        api_key: token,
        batch,
        sent_at: '2023-01-01T12:00:05Z',
        historical_migration: true,
      });
      expect(parsed.token).toBe(token);
      expect(parsed.events).toBe(batch);
      expect(parsed.historicalMigration).toBe(true);
      expect(formatInstant(parsed.sentAt!)).toBe('2023-01-01T12:00:05.000Z');
    });

    it('takes historical_migration only when it is true', () => {
      for (const historical_migration of [false, 'true', 1, null]) {
        expect(parseBatch({ api_key: token, batch: [{}], historical_migration }).historicalMigration).toBe(
          false,
        );
      }
    });

    it('reads an array of events', () => {
      const parsed = parseBatch([{ event: 'a', token }, { event: 'b' }]);
      expect(parsed.events).toHaveLength(2);
      expect(parsed.token).toBe(token);
      expect(parsed.historicalMigration).toBe(false);
    });

    it('reads a single event', () => {
      const event = { event: 'a', distinct_id: '1', api_key: token };
      expect(parseBatch(event).events).toEqual([event]);
    });

    it('answers 400 for a payload that is no event, array or batch', () => {
      for (const payload of [42, 'text', null, true]) {
        expect(failure(() => parseBatch(payload))).toBeInstanceOf(PayloadInvalidError);
      }
    });

    it('answers 400 when batch is not an array', () => {
      for (const batch of [{}, 'x', null, 3]) {
        const error = failure(() => parseBatch({ api_key: token, batch }));
        expect(error).toBeInstanceOf(PayloadInvalidError);
        expect(error.message).toMatch(/batch must be an array/);
      }
    });

    it('answers 400 for a request without events', () => {
      expect(failure(() => parseBatch({ api_key: token, batch: [] }))).toMatchObject({
        status: 400,
        message: 'request holds no event',
      });
      expect(failure(() => parseBatch([]))).toBeInstanceOf(PayloadInvalidError);
    });

    it('passes elements that are not objects on to the normaliser', () => {
      expect(parseBatch({ api_key: token, batch: [1, 'x', null] }).events).toEqual([1, 'x', null]);
    });
  });

  describe('token', () => {
    it('prefers the batch-level api_key, then token, over the events', () => {
      expect(parseBatch({ api_key: token, token: 'phc_other', batch: [{ token: 'phc_x' }] }).token).toBe(
        token,
      );
      expect(parseBatch({ token, batch: [{ api_key: 'phc_x' }] }).token).toBe(token);
    });

    it.each([
      ['token', { token }],
      ['$token', { $token: token }],
      ['api_key', { api_key: token }],
      ['properties.token', { properties: { token } }],
    ])('finds an event-level %s', (_place, event) => {
      expect(parseBatch({ batch: [{ event: 'a' }, { event: 'b', ...event }] }).token).toBe(token);
    });

    it('ignores a properties.token that is not a string', () => {
      expect(failure(() => parseBatch([{ properties: { token: 5 } }]))).toBeInstanceOf(NoTokenError);
    });

    it('answers 401 missing_api_key when no token is anywhere', () => {
      const error = failure(() => parseBatch([{ event: 'a', properties: 'not an object' }]));
      expect(error).toBeInstanceOf(NoTokenError);
      expect(error.toBody()).toEqual({
        type: 'authentication_error',
        code: 'missing_api_key',
        detail: expect.stringContaining('API key not provided') as string,
        attr: null,
      });
      expect(error.status).toBe(401);
    });

    it('answers 401 when events carry different tokens', () => {
      const error = failure(() => parseBatch([{ token }, { token: 'phc_other' }]));
      expect(error).toBeInstanceOf(MultipleTokensError);
      expect(error).toMatchObject({
        status: 401,
        message: 'batch submitted with inconsistent api_key values',
      });
    });

    it.each([
      ['a personal API key', 'phx_secret', 'personal_api_key'],
      ['an empty key', '', 'empty'],
      ['a key over 64 characters', 'p'.repeat(65), 'too_long'],
      ['a non-ASCII key', 'phc_é', 'not_ascii'],
      ['a key with NUL', 'phc_\u0000', 'null_byte'],
      ['a number', 12345, 'not_a_string'],
      ['an object', { key: 'x' }, 'not_a_string'],
    ])('answers 401 invalid_api_key for %s', (_what, apiKey, reason) => {
      const error = failure(() => parseBatch({ api_key: apiKey, batch: [{ event: 'a' }] }));
      expect(error).toBeInstanceOf(InvalidTokenError);
      expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', reason });
    });

    it('accepts a key of exactly 64 characters', () => {
      expect(parseBatch({ api_key: 'p'.repeat(64), batch: [{}] }).token).toHaveLength(64);
    });

    it('validates an event-level token too', () => {
      expect(failure(() => parseBatch([{ api_key: 'phx_secret' }]))).toBeInstanceOf(InvalidTokenError);
    });

    it('does not run over a ten-megabyte key', () => {
      expect(failure(() => parseBatch({ api_key: 'x'.repeat(10_000_000), batch: [{}] }))).toMatchObject({
        reason: 'too_long',
      });
    });
  });

  describe('sent_at', () => {
    const batch = [{ event: 'a', token }];

    it('reads ?_= and ?sent_at= as milliseconds', () => {
      expect(formatInstant(parseBatch(batch, { _: '1672574405000' }).sentAt!)).toBe(
        '2023-01-01T12:00:05.000Z',
      );
      expect(formatInstant(parseBatch(batch, { sent_at: '1672574405000' }).sentAt!)).toBe(
        '2023-01-01T12:00:05.000Z',
      );
    });

    it('ignores a query sent_at before 2021 (seconds)', () => {
      expect(parseBatch(batch, { _: '1672574405' }).sentAt).toBeNull();
    });

    it('prefers the body sent_at, and falls back to the query when it does not parse', () => {
      const body = { api_key: token, batch, sent_at: '2023-01-01T12:00:05.123456Z' };
      expect(formatInstant(parseBatch(body, { _: '1672574400000' }).sentAt!)).toBe(
        '2023-01-01T12:00:05.123456Z',
      );
      const garbled = { ...body, sent_at: 'soon' };
      expect(formatInstant(parseBatch(garbled, { _: '1672574400000' }).sentAt!)).toBe(
        '2023-01-01T12:00:00.000Z',
      );
    });

    it('reads sent_at from a single event body (as the legacy capture did)', () => {
      expect(parseBatch({ event: 'a', token, sent_at: '2023-01-01T12:00:05Z' }).sentAt).not.toBeNull();
    });

    it('has none by default', () => {
      expect(parseBatch(batch).sentAt).toBeNull();
    });
  });
});

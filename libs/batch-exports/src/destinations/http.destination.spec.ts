import { parseRetryAfter, toCaptureEvent } from './http.destination';

describe('HTTP destination rows and headers', () => {
  it("keeps $set and $set_once the properties carry, and folds the columns' in when they lack them", () => {
    const row = {
      uuid: 'u',
      event: '$identify',
      timestamp: '2024-03-01T10:00:00Z',
      created_at: '2024-03-01T10:00:00Z',
      _inserted_at: '2024-03-01T10:00:00Z',
      distinct_id: 'd',
      team_id: 1,
      properties: { $set: { plan: 'in-properties' } },
      elements_chain: '',
      person_id: 'p',
      person_properties: {},
      set: { plan: 'column' },
      set_once: { first: 'column' },
    };
    expect(toCaptureEvent(row).properties).toEqual({
      $set: { plan: 'in-properties' },
      $set_once: { first: 'column' },
      $geoip_disable: true,
    });
    // PostHog adds $elements_chain to $autocapture events only.
    expect(toCaptureEvent({ ...row, event: '$autocapture' }).properties).toMatchObject({
      $elements_chain: '',
    });
  });

  it('reads Retry-After in seconds or as an HTTP date', () => {
    const now = Date.parse('2024-03-01T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter('Fri, 01 Mar 2024 10:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Fri, 01 Mar 2024 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

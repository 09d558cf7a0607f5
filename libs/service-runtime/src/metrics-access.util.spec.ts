import { refuseMetricsRequest } from './metrics-access.util';

describe('refuseMetricsRequest', () => {
  const token = 'a-metrics-token-of-some-length';

  it('lets every request through when no token is configured', () => {
    expect(refuseMetricsRequest(undefined, undefined)).toBeNull();
    expect(refuseMetricsRequest('Bearer anything', undefined)).toBeNull();
  });

  it('takes the token as a Bearer credential, the scheme in any case', () => {
    expect(refuseMetricsRequest(`Bearer ${token}`, token)).toBeNull();
    expect(refuseMetricsRequest(`bearer ${token}`, token)).toBeNull();
    expect(refuseMetricsRequest([`Bearer ${token}`], token)).toBeNull();
  });

  it('refuses a missing credential as not authenticated, a wrong one as failed', () => {
    for (const header of [undefined, '', token, `Basic ${token}`, 'Bearer ']) {
      expect(refuseMetricsRequest(header, token)?.body.code).toBe('not_authenticated');
    }
    for (const header of ['Bearer x', `Bearer ${token}x`, `Bearer ${token.slice(1)}`]) {
      expect(refuseMetricsRequest(header, token)).toEqual({
        status: 401,
        body: {
          type: 'authentication_error',
          code: 'authentication_failed',
          detail: 'The metrics token is not valid.',
          attr: null,
        },
      });
    }
  });
});

import { REDACTED, redactHeaders, redactQuery, redactUrl } from './log-redaction.util';

describe('log redaction', () => {
  const personalKey = 'phx_2a9b8c7d6e5f4g3h2i1j0kLMNOPqrstu';

  it.each(['personal_api_key', 'api_key', 'token', 'access_token', 'secret_api_key', 'password'])(
    'replaces the value of ?%s= in a URL',
    (name) => {
      const url = redactUrl(`/api/projects/1/feature_flags/?${name}=supersecret&limit=10`);
      expect(url).toBe(`/api/projects/1/feature_flags/?${name}=${REDACTED}&limit=10`);
    },
  );

  it('replaces a percent-encoded credential name and keeps ordinary parameters', () => {
    expect(redactUrl('/x/?personal%5Fapi%5Fkey=abc&key=%24browser')).toBe(
      `/x/?personal%5Fapi%5Fkey=${REDACTED}&key=%24browser`,
    );
  });

  it('replaces personal-key-shaped values anywhere in the URL, keeping public project tokens', () => {
    const url = redactUrl(`/api/${personalKey}/x?q=${personalKey}&t=phc_publicToken123`);
    expect(url).not.toContain(personalKey);
    expect(url).toContain('phc_publicToken123');
  });

  it('replaces JWT-shaped values', () => {
    expect(redactUrl('/x?next=eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJl')).toBe(`/x?next=${REDACTED}`);
  });

  it('survives malformed percent-encoding', () => {
    expect(redactUrl('/x?%E0%A4%A=1&token=abc')).toBe(`/x?%E0%A4%A=1&token=${REDACTED}`);
  });

  it('replaces credential headers, whatever their case, and credential-shaped values in others', () => {
    const headers = redactHeaders({
      authorization: `Bearer ${personalKey}`,
      'x-api-key': 'abc',
      cookie: 'sessionid=1',
      'x-forwarded-for': '10.0.0.1',
      referer: `https://app.example/?k=${personalKey}`,
    });
    expect(headers).toEqual({
      authorization: REDACTED,
      'x-api-key': REDACTED,
      cookie: REDACTED,
      'x-forwarded-for': '10.0.0.1',
      referer: `https://app.example/?k=${REDACTED}`,
    });
  });

  it('replaces credential entries of a parsed query object', () => {
    expect(redactQuery({ personal_api_key: 'abc', limit: '1', list: [personalKey] })).toEqual({
      personal_api_key: REDACTED,
      limit: '1',
      list: [REDACTED],
    });
  });
});

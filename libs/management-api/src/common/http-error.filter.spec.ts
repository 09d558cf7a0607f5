import { QueryFailedError } from 'typeorm';
import { withoutQueryValues } from './http-error.filter';

describe('the error filter log', () => {
  it('logs a failed query without its statement or parameters', () => {
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      detail: 'Key (url)=(https://example.com/app.tgz?private_token=secret) already exists.',
    });
    const failure = new QueryFailedError(
      'INSERT INTO plugins (url_with_secrets) VALUES ($1)',
      ['https://example.com/app.tgz?private_token=secret'],
      driverError,
    );
    const logged = withoutQueryValues(failure) as Error & Record<string, unknown>;
    expect(logged.message).toBe('duplicate key value violates unique constraint');
    expect(logged.code).toBe('23505');
    expect(JSON.stringify({ ...logged, stack: undefined })).not.toContain('secret');
    expect(logged).not.toHaveProperty('parameters');
    expect(logged).not.toHaveProperty('query');
  });

  it('leaves other errors as they are', () => {
    const error = new Error('boom');
    expect(withoutQueryValues(error)).toBe(error);
  });
});

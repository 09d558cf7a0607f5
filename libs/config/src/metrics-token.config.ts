import { ConfigError, type Environment, readString } from './env.util';

const MIN_METRICS_TOKEN_LENGTH = 16;

/**
 * When set, `/metrics` on every port answers only `Authorization: Bearer <token>`; unset, anyone
 * who reaches the port reads it. Every app reads it alike: one setting covers a deployment.
 */
export function readMetricsToken(env: Environment): string | undefined {
  const token = readString(env, 'METRICS_TOKEN');
  if (token !== undefined && (token.length < MIN_METRICS_TOKEN_LENGTH || /\s/.test(token))) {
    throw new ConfigError(
      'METRICS_TOKEN',
      '***',
      `must be at least ${MIN_METRICS_TOKEN_LENGTH} characters, without spaces`,
    );
  }
  return token;
}

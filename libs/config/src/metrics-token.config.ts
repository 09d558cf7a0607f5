import { ConfigError, type Environment, readString } from './env.util';

const MIN_METRICS_TOKEN_LENGTH = 16;

/** One setting for every app; unset, anyone who reaches a port reads its `/metrics`. */
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

/** Every app builds its config once at start-up from these; a bad value is a `NAME=value: why` ConfigError. */
export type Environment = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(name: string, value: string, reason: string) {
    super(`${name}=${value}: ${reason}`);
    this.name = 'ConfigError';
  }
}

function raw(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function readString(env: Environment, name: string, fallback: string): string;
export function readString(env: Environment, name: string): string | undefined;
export function readString(env: Environment, name: string, fallback?: string): string | undefined {
  return raw(env, name) ?? fallback;
}

export function readPort(env: Environment, name: string, fallback: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(name, value, 'must be an integer port between 0 and 65535');
  }
  return port;
}

export function readInteger(env: Environment, name: string, fallback: number, min = 0): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < min) {
    throw new ConfigError(name, value, `must be an integer >= ${min}`);
  }
  return parsed;
}

export function readBoolean(env: Environment, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new ConfigError(name, value, 'must be true or false');
}

export function readUrl(env: Environment, name: string, protocols: readonly string[]): URL | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, redact(value), 'is not a valid URL');
  }
  if (!protocols.includes(url.protocol.replace(/:$/, ''))) {
    throw new ConfigError(name, redact(value), `must use one of the protocols ${protocols.join(', ')}`);
  }
  return url;
}

export function readEnum<T extends string>(
  env: Environment,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, value, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** Hides the password of a URL so that config errors never print a secret. */
export function redact(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return value.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}

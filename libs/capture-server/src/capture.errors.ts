// The Unavailable errors: Postgres failed for something never read before; the routes answer 503.

export class TokenLookupUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the project token could not be looked up: Postgres is unavailable', { cause });
    this.name = 'TokenLookupUnavailableError';
  }
}

export class FlagDefinitionsUnavailableError extends Error {
  constructor(cause: unknown) {
    super('flag definitions could not be read: Postgres is unavailable', { cause });
    this.name = 'FlagDefinitionsUnavailableError';
  }
}

export class SiteAppsUnavailableError extends Error {
  constructor(cause: unknown) {
    super('site apps could not be read: Postgres is unavailable', { cause });
    this.name = 'SiteAppsUnavailableError';
  }
}

export class RemoteConfigUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the remote config could not be read: Postgres is unavailable', { cause });
    this.name = 'RemoteConfigUnavailableError';
  }
}

/** A `/flags` or `/decide` body refused, with its status and PostHog's code. */
export class FlagRequestError extends Error {
  constructor(
    readonly status: 400 | 401,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'FlagRequestError';
  }
}

/**
 * The config keys holding each destination type's credentials (PostHog's per-type list): the
 * management API never shows them, and a run's error and log lines never quote their values.
 */
export const DESTINATION_SECRET_KEYS = {
  S3: ['aws_access_key_id', 'aws_secret_access_key'],
  Postgres: ['user', 'password'],
  HTTP: ['token'],
  NoOp: [],
} as const satisfies Record<string, readonly string[]>;

/** Every type's secret keys together: a config may hold another type's (see the management API). */
export const ALL_DESTINATION_SECRET_KEYS: readonly string[] = [
  ...new Set(Object.values(DESTINATION_SECRET_KEYS).flat()),
];

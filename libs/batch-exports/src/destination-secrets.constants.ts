/** Never shown by the management API, never quoted in a run's errors and logs. */
export const DESTINATION_SECRET_KEYS = {
  S3: ['aws_access_key_id', 'aws_secret_access_key'],
  Postgres: ['user', 'password'],
  HTTP: ['token'],
  NoOp: [],
} as const satisfies Record<string, readonly string[]>;

/** A config may hold another type's. */
export const ALL_DESTINATION_SECRET_KEYS: readonly string[] = [
  ...new Set(Object.values(DESTINATION_SECRET_KEYS).flat()),
];

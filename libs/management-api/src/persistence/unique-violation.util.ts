import { QueryFailedError } from 'typeorm';

const UNIQUE_VIOLATION = '23505';

/** Postgres refused a row that a unique index already holds. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION
  );
}

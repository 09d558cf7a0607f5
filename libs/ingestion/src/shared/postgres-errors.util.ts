/** Null for anything else (network errors, bugs). */
export function sqlState(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || !('code' in error)) return null;
  const { code } = error;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

export function isConcurrencyConflict(error: unknown): boolean {
  const state = sqlState(error);
  return (
    state === '40001' || // serialization_failure
    state === '40P01' || // deadlock_detected
    state === '23505' || // unique_violation
    state === '23503' // foreign_key_violation
  );
}

/** Retrying would fail forever: the event is found and dead-lettered (integrity violations after retries). */
export function isDataRejection(error: unknown): boolean {
  const state = sqlState(error);
  if (state === null) return false;
  const errorClass = state.slice(0, 2);
  return (
    errorClass === '22' || // data_exception
    errorClass === '23' || // integrity_constraint_violation
    errorClass === '54' // program_limit_exceeded (e.g. index row size)
  );
}

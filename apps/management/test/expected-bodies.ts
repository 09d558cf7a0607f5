/** Error bodies the management API answers with, as a client sees them. */
export const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };

export const INSUFFICIENT_LEVEL = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'Your organization access level is insufficient.',
  attr: null,
};

export function validationError(code: string, detail: string, attr: string | null) {
  return { type: 'validation_error', code, detail, attr };
}

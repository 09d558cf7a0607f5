/** SECURITY: request loggers run every URL, query and header map through these, so credentials never reach a log line. */

export const REDACTED = '[redacted]';

/** NOTE: a bare `key` is not one: the event listing's `values/?key=$browser` names a property. */
const CREDENTIAL_NAME =
  /(api[-_]?key|secret|token|passw(or)?d|pwd|auth|cookie|session|signature|credential|private[-_]?key)/i;

/**
 * PostHog's personal, project secret and OAuth keys, and JWTs. Project tokens (`phc_`) are public
 * (every page loading posthog-js has one), and logs need them to tell projects apart.
 */
const CREDENTIAL_VALUE = /\b(ph[xsar]_[A-Za-z0-9]+|eyJ[\w-]+\.[\w-]+\.[\w-]+)/g;

export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

function redactText(text: string): string {
  return text.replace(CREDENTIAL_VALUE, REDACTED);
}

export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  if (queryStart === -1) return redactText(path);
  const query = url.slice(queryStart + 1).split('&');
  const redacted = query.map((pair) => {
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    if (equals !== -1 && isCredentialName(name)) return `${rawName}=${REDACTED}`;
    return redactText(pair);
  });
  return `${redactText(path)}?${redacted.join('&')}`;
}

export function redactQuery(query: unknown): unknown {
  if (query === null || typeof query !== 'object') return query;
  return Object.fromEntries(
    Object.entries(query as Record<string, unknown>).map(([name, value]) => [
      name,
      isCredentialName(name) ? REDACTED : redactValue(value),
    ]),
  );
}

export function redactHeaders(
  headers: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!headers) return headers;
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      isCredentialName(name) ? REDACTED : redactValue(value),
    ]),
  );
}

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  return value;
}

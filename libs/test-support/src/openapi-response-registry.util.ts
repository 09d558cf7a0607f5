import { appendFileSync } from 'node:fs';
import { OpenApiResponseChecker, type ResponseMismatch } from './openapi-response-check.util';

export interface RecordedMismatch extends ResponseMismatch {
  test: string | undefined;
}

interface ResponseCheckState {
  /** Origin (`http://127.0.0.1:8000`) → the checker of the document that host serves. */
  checkers: Map<string, OpenApiResponseChecker>;
  asked: Set<string>;
  mismatches: RecordedMismatch[];
  /** Body reads still under way: the verdict waits for them. */
  pending: Set<Promise<void>>;
  checked: number;
  originalFetch: typeof fetch | undefined;
  currentTestName: () => string | undefined;
  settled: boolean;
}

// On globalThis: the jest setup file and a test file see one state whatever module instances they get.
const STATE_KEY = Symbol.for('hogbase.openApiResponseCheck');

function state(): ResponseCheckState {
  const holder = globalThis as { [STATE_KEY]?: ResponseCheckState };
  holder[STATE_KEY] ??= {
    checkers: new Map(),
    asked: new Set(),
    mismatches: [],
    pending: new Set(),
    checked: 0,
    originalFetch: undefined,
    currentTestName: () => undefined,
    settled: false,
  };
  return holder[STATE_KEY];
}

const originOf = (url: string) => new URL(url).origin;

function record(mismatch: ResponseMismatch, test: string | undefined): void {
  const current = state();
  const recorded = { ...mismatch, test };
  if (current.settled) {
    process.stderr.write(`OpenAPI response check, after the verdict: ${formatMismatch(recorded)}\n`);
    return;
  }
  current.mismatches.push(recorded);
}

export function registerOpenApiDocument(baseUrl: string, document: object): void {
  state().checkers.set(originOf(baseUrl), new OpenApiResponseChecker(document));
}

/** For a server that is gone: its port may be reused. */
export function unregisterOpenApiDocument(baseUrl: string): void {
  state().checkers.delete(originOf(baseUrl));
}

/** A host that serves no document at `/api/schema/` is itself a mismatch. */
export async function registerOpenApiDocumentFrom(baseUrl: string): Promise<void> {
  const current = state();
  current.asked.add(originOf(baseUrl));
  const url = `${baseUrl}/api/schema/`;
  const response = await (current.originalFetch ?? fetch)(url);
  const text = await response.text();
  let document: unknown;
  try {
    document = response.status === 200 ? JSON.parse(text) : undefined;
  } catch {
    document = undefined;
  }
  if (typeof document !== 'object' || document === null) {
    record(
      {
        method: 'GET',
        path: '/api/schema/',
        status: response.status,
        operation: undefined,
        problem: `the host at ${baseUrl} serves no OpenAPI document, so none of its answers can be checked`,
        errors: [text.slice(0, 120)],
      },
      current.currentTestName(),
    );
    return;
  }
  registerOpenApiDocument(baseUrl, document);
}

/**
 * Asks once per origin, so a stopped server's unregistered document is not asked again. A server that
 * does not answer is left to the test's own request.
 */
export async function registerOpenApiDocumentOnce(baseUrl: string): Promise<void> {
  if (state().asked.has(originOf(baseUrl))) return;
  try {
    await registerOpenApiDocumentFrom(baseUrl);
  } catch {
    // Not listening (yet, or any more): the test's own request meets the same and says so.
  }
}

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function requestOf(input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]) {
  if (typeof input === 'string') return { url: input, method: (init?.method ?? 'GET').toUpperCase() };
  if (input instanceof URL) return { url: input.href, method: (init?.method ?? 'GET').toUpperCase() };
  return { url: input.url, method: (init?.method ?? input.method).toUpperCase() };
}

function observe(method: string, url: string, response: Response): void {
  const current = state();
  let origin: string;
  try {
    origin = originOf(url);
  } catch {
    return;
  }
  const checker = current.checkers.get(origin);
  if (!checker) return;
  const test = current.currentTestName();
  const contentType = response.headers.get('content-type');
  // JSON is read from a clone; other bodies are checked for status and content type only.
  const readBody =
    method !== 'HEAD' &&
    (contentType === null || JSON_CONTENT_TYPE.test(contentType)) &&
    response.body !== null;
  const bodyText =
    method === 'HEAD' || response.body === null || response.headers.get('content-length') === '0'
      ? ''
      : undefined;
  const check = (text: string | undefined) => {
    current.checked += 1;
    try {
      const mismatch = checker.check({ method, url, status: response.status, contentType, bodyText: text });
      if (mismatch) record(mismatch, test);
    } catch (error) {
      // A schema Ajv cannot compile is a defect of the document too.
      record(
        {
          method,
          path: new URL(url).pathname,
          status: response.status,
          operation: undefined,
          problem: `the check itself failed: ${(error as Error).message}`,
          errors: [],
        },
        test,
      );
    }
  };
  if (!readBody) {
    check(bodyText);
    return;
  }
  const pending: Promise<void> = response
    .clone()
    .text()
    .then(check, () => undefined) // The test aborted the request: nothing was answered to check.
    .finally(() => current.pending.delete(pending));
  current.pending.add(pending);
}

/** Wraps the global `fetch` once, so SDKs such as posthog-node are checked too. */
export function installOpenApiResponseCheck(options: { currentTestName: () => string | undefined }): void {
  const current = state();
  current.currentTestName = options.currentTestName;
  if (current.originalFetch) return;
  const originalFetch = globalThis.fetch;
  current.originalFetch = originalFetch;
  globalThis.fetch = async (input, init) => {
    const response = await originalFetch(input, init);
    const request = requestOf(input, init);
    // A followed redirect ends on the final URL; a 301/302/303 turned the method into GET.
    const method = response.redirected && request.method !== 'HEAD' ? 'GET' : request.method;
    observe(method, response.url || request.url, response);
    return response;
  };
}

export async function settleOpenApiResponseChecks(): Promise<{
  checked: number;
  mismatches: RecordedMismatch[];
}> {
  const current = state();
  while (current.pending.size > 0) await Promise.all([...current.pending]);
  current.settled = true;
  return { checked: current.checked, mismatches: current.mismatches };
}

function formatMismatch(mismatch: RecordedMismatch): string {
  const errors = [...mismatch.errors, ...(mismatch.body === undefined ? [] : [`answered: ${mismatch.body}`])]
    .map((line) => `\n      ${line}`)
    .join('');
  return (
    `${mismatch.method} ${mismatch.path} → ${mismatch.status}` +
    ` (${mismatch.operation ?? 'no documented operation'}): ${mismatch.problem}` +
    `${mismatch.test ? `\n      in "${mismatch.test}"` : ''}${errors}`
  );
}

/** At most `limit` groups by operation, status and problem, one example each. */
export function formatResponseMismatches(mismatches: RecordedMismatch[], limit = 40): string {
  const groups = new Map<string, { example: RecordedMismatch; count: number }>();
  for (const mismatch of mismatches) {
    const key = [
      mismatch.operation ?? `${mismatch.method} ${mismatch.path}`,
      mismatch.status,
      mismatch.problem,
      mismatch.errors.join('|'),
    ].join(' ');
    const group = groups.get(key);
    if (group) group.count += 1;
    else groups.set(key, { example: mismatch, count: 1 });
  }
  const lines = [...groups.values()]
    .slice(0, limit)
    .map(
      ({ example, count }) =>
        `  - ${formatMismatch(example)}${count > 1 ? `\n      (${count} answers alike)` : ''}`,
    );
  const more = groups.size > limit ? `\n  … and ${groups.size - limit} more kinds` : '';
  return `${lines.join('\n')}${more}`;
}

/** For local triage only (OPENAPI_RESPONSE_CHECK=report): one JSON line per mismatch. */
export function appendResponseMismatches(
  file: string,
  testPath: string,
  mismatches: RecordedMismatch[],
): void {
  if (mismatches.length === 0) return;
  appendFileSync(
    file,
    mismatches.map((mismatch) => `${JSON.stringify({ testPath, ...mismatch })}\n`).join(''),
  );
}

// One `schemathesis run`'s `--report ndjson,json` as findings: each distinct failure once, with its
// count and a curl command reproducing its first case.

/** Bodies base64-encoded. */
interface Interaction {
  request: {
    method: string;
    uri: string;
    headers: Record<string, string[]>;
    body?: { $base64: string } | null;
  };
  response?: {
    status_code: number;
    headers: Record<string, string[]>;
    content?: { $base64: string } | null;
  } | null;
}

interface CheckResult {
  name: string;
  status: string;
  failure_info?: {
    failure: { code?: string; title: string; message: string; operation: string };
  };
}

interface Recorder {
  label: string;
  checks?: Record<string, CheckResult[]>;
  interactions?: Record<string, Interaction>;
}

/** The same operation failing the same check the same way. */
export interface SchemathesisFinding {
  operation: string;
  check: string;
  /** E.g. `ST103 Undocumented status code`. */
  title: string;
  /** `no answer` when the request itself failed. */
  status: string;
  cases: number;
  /** For the first case. */
  message: string;
  answer: string;
  /** The first case; the key is left as `$HOGBASE_PERSONAL_API_KEY`. */
  curl: string;
}

export interface SchemathesisError {
  operation: string;
  message: string;
  phases: string[];
}

export interface SchemathesisRun {
  summary: {
    complete: boolean;
    exit_code: number;
    running_time: number;
    seed: number | null;
    operations: { total: number; selected: number; tested: number; errored: number; skipped: number };
    test_cases: { generated: number };
  };
  requests: number;
  findings: SchemathesisFinding[];
  errors: SchemathesisError[];
  fatal: string[];
}

const ANSWER_LIMIT = 300;

/** A run killed part-way leaves an empty JSON report and a cut last event: what it recorded is still read. */
export function readSchemathesisRun(ndjson: string, jsonReport: string): SchemathesisRun {
  const findings = new Map<string, SchemathesisFinding>();
  const errors = new Map<string, SchemathesisError>();
  const seenChecks = new Set<string>();
  const seenRequests = new Set<string>();
  const fatal: string[] = [];
  const labels = new Set<string>();
  let loaded: { total: number; selected: number } | undefined;
  const timestamps: number[] = [];

  for (const line of ndjson.split('\n')) {
    const event = parseEvent(line);
    if (!event) continue;
    const [kind] = Object.keys(event);
    const body = event[kind];
    if (typeof body.timestamp === 'number') timestamps.push(body.timestamp);
    if (kind === 'LoadingFinished') {
      const statistic = body.statistic as { operations?: { total: number; selected: number } } | undefined;
      loaded = statistic?.operations;
    }
    if (kind === 'FatalError') fatal.push(`FatalError: ${JSON.stringify(body.exception ?? body)}`);
    if (kind === 'Interrupted') fatal.push(`Interrupted: ${JSON.stringify(body.phase ?? null)}`);
    if (kind === 'NonFatalError') {
      const value = body.value as { type?: string; message?: string } | undefined;
      const operation = String(body.label);
      const message = `${value?.type ?? 'Error'}: ${value?.message ?? JSON.stringify(body)}`;
      const key = `${operation}\n${message}`;
      const error = errors.get(key) ?? { operation, message, phases: [] };
      const phase = typeof body.phase === 'string' ? body.phase : undefined;
      if (phase && !error.phases.includes(phase)) error.phases.push(phase);
      errors.set(key, error);
    }
    const recorder = body.recorder as Recorder | undefined;
    if (!recorder) continue;
    labels.add(recorder.label);
    for (const [caseId, interaction] of Object.entries(recorder.interactions ?? {})) {
      // A final scenario replays a failing case: count each case's request once.
      seenRequests.add(`${caseId} ${interaction.request.method} ${interaction.request.uri}`);
    }
    for (const [caseId, checks] of Object.entries(recorder.checks ?? {})) {
      for (const check of checks) {
        if (check.status !== 'failure' || !check.failure_info) continue;
        if (seenChecks.has(`${caseId} ${check.name}`)) continue;
        seenChecks.add(`${caseId} ${check.name}`);
        const failure = check.failure_info.failure;
        const interaction = recorder.interactions?.[caseId];
        const status = interaction?.response ? String(interaction.response.status_code) : 'no answer';
        const operation = failure.operation || recorder.label;
        const title = [failure.code, failure.title].filter(Boolean).join(' ');
        const key = `${operation}\n${check.name}\n${title}\n${status}`;
        const existing = findings.get(key);
        if (existing) {
          existing.cases += 1;
          continue;
        }
        findings.set(key, {
          operation,
          check: check.name,
          title,
          status,
          cases: 1,
          message: failure.message,
          answer: interaction?.response ? answerText(interaction.response.content) : '',
          curl: interaction ? curlCommand(interaction.request) : '',
        });
      }
    }
  }
  const summary: SchemathesisRun['summary'] = jsonReport.trim()
    ? (JSON.parse(jsonReport) as SchemathesisRun['summary'])
    : {
        complete: false,
        exit_code: -1,
        running_time: timestamps.length ? Math.max(...timestamps) - Math.min(...timestamps) : 0,
        seed: null,
        operations: {
          total: loaded?.total ?? 0,
          selected: loaded?.selected ?? 0,
          tested: labels.size,
          errored: 0,
          skipped: 0,
        },
        test_cases: { generated: seenRequests.size },
      };
  return {
    summary,
    requests: seenRequests.size,
    findings: [...findings.values()].sort(byOperation),
    errors: [...errors.values()].sort(byOperation),
    fatal,
  };
}

function parseEvent(line: string): Record<string, Record<string, unknown>> | undefined {
  if (!line.trim()) return undefined;
  try {
    return JSON.parse(line) as Record<string, Record<string, unknown>>;
  } catch {
    return undefined; // The last event of a run killed while writing it.
  }
}

function byOperation(a: { operation: string }, b: { operation: string }): number {
  const [methodA, pathA] = a.operation.split(' ');
  const [methodB, pathB] = b.operation.split(' ');
  return (pathA ?? '').localeCompare(pathB ?? '') || methodA.localeCompare(methodB);
}

function decode(content: { $base64: string } | null | undefined): string {
  return content ? Buffer.from(content.$base64, 'base64').toString('utf8') : '';
}

function answerText(content: { $base64: string } | null | undefined): string {
  const text = decode(content);
  return text.length > ANSWER_LIMIT ? `${text.slice(0, ANSWER_LIMIT)}…` : text;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The filtered credential is shown as a variable the reader sets. */
export function curlCommand(request: Interaction['request']): string {
  const parts = ['curl', '-X', request.method];
  for (const [name, values] of Object.entries(request.headers)) {
    for (const value of values) {
      const shown = name.toLowerCase() === 'authorization' ? 'Bearer $HOGBASE_PERSONAL_API_KEY' : value;
      // Double quotes only where the variable must expand.
      parts.push('-H', shown.includes('$HOGBASE') ? `"${name}: ${shown}"` : shellQuote(`${name}: ${shown}`));
    }
  }
  const body = decode(request.body);
  if (body) parts.push('--data-binary', shellQuote(body));
  parts.push(shellQuote(request.uri));
  return parts.join(' ');
}

export function formatSchemathesisRun(name: string, run: SchemathesisRun): string {
  const { summary } = run;
  const lines = [
    `${name}: ${summary.operations.tested}/${summary.operations.selected} operations tested ` +
      `(${summary.operations.total} in the document), ${summary.test_cases.generated} test cases, ` +
      `${run.requests} requests, ${summary.running_time.toFixed(0)} s, seed ${String(summary.seed)}; ` +
      `${run.findings.length} distinct failures, ${run.errors.length} errors`,
  ];
  for (const fatal of run.fatal) lines.push(`  ${fatal}`);
  for (const error of run.errors) {
    lines.push(`  ERROR ${error.operation} (${error.phases.join(', ')}): ${error.message}`);
  }
  for (const finding of run.findings) {
    lines.push(
      `  ${finding.operation}: ${finding.title} [${finding.check}], answered ${finding.status}, ${finding.cases} case(s)`,
      ...finding.message.split('\n').map((line) => `      ${line}`),
    );
    if (finding.answer) lines.push(`      answer: ${finding.answer}`);
    if (finding.curl) lines.push(`      ${finding.curl}`);
  }
  return lines.join('\n');
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Nearest-rank percentile, `fraction` in (0, 1]. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

/** One measured quantity across the rounds of a benchmark. */
export interface Metric {
  /** Key in the JSON summary. */
  key: string;
  label: string;
  rounds: number[];
  /** Decimal places shown in the table (default 0). */
  digits?: number;
}

function format(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A table, one row per metric: every round, then the median. */
export function printRoundsTable(title: string, metrics: readonly Metric[]): void {
  const roundCount = Math.max(...metrics.map((metric) => metric.rounds.length));
  const header = [
    'metric',
    ...Array.from({ length: roundCount }, (_, index) => `round ${index + 1}`),
    'median',
  ];
  const rows = metrics.map((metric) => [
    metric.label,
    ...Array.from({ length: roundCount }, (_, index) => format(metric.rounds[index], metric.digits)),
    format(median(metric.rounds), metric.digits),
  ]);
  printTable(title, header, rows);
}

export function printTable(title: string, header: readonly string[], rows: readonly string[][]): void {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  // The first column reads left-aligned, numbers right-aligned.
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}

export interface BenchSummary {
  bench: string;
  median: Record<string, number>;
  rounds: Record<string, number[]>;
  /** The settings of the run (events per batch, connections, ...). */
  [setting: string]: unknown;
}

/**
 * The machine-readable line of a benchmark: `{"bench": name, ...settings, "median": {...}, "rounds": {...}}`
 * on one line, so `npm run bench | grep '^{"bench"'` collects them.
 */
export function summaryLine(
  bench: string,
  settings: Record<string, unknown>,
  metrics: readonly Metric[],
): BenchSummary {
  const round = (value: number, digits = 0) => Number(value.toFixed(Math.max(digits, 0)));
  const summary: BenchSummary = {
    bench,
    ...settings,
    median: Object.fromEntries(
      metrics.map((metric) => [metric.key, round(median(metric.rounds), metric.digits)]),
    ),
    rounds: Object.fromEntries(
      metrics.map((metric) => [metric.key, metric.rounds.map((value) => round(value, metric.digits))]),
    ),
  };
  console.log(JSON.stringify(summary));
  return summary;
}

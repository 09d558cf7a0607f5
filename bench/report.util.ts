/** The mean of the two middle ones for an even count. */
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

export interface Metric {
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
  [setting: string]: unknown;
}

/** One line, so `npm run bench | grep '^{"bench"'` collects them. */
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

/**
 * CSV as PostHog's renderer (djangorestframework-csv) writes it: each record flattened, nested
 * objects and arrays into dotted columns (`properties.$browser`, `elements.0.tag_name`), the
 * header the sorted union of every record's columns, a missing cell empty.
 */
export function toCsv(records: readonly unknown[]): string {
  const rows = records.map((record) => flatten(record));
  const header = [...new Set(rows.flatMap((row) => [...row.keys()]))].sort();
  const lines = [header.map(csvCell).join(',')];
  for (const row of rows) lines.push(header.map((column) => csvCell(row.get(column) ?? '')).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function flatten(value: unknown, prefix = '', into = new Map<string, string>()): Map<string, string> {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((item, index) => [String(index), item] as const)
      : Object.entries(value);
    if (entries.length === 0 && prefix) into.set(prefix, '');
    for (const [key, item] of entries) flatten(item, prefix ? `${prefix}.${key}` : key, into);
    return into;
  }
  const text =
    typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value);
  into.set(prefix || 'value', text);
  return into;
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

import type { Readable } from 'node:stream';
import { NonRetryableExportError } from '../batch-export.errors';
import type { ExportedEventRow, ExportedPersonRow } from '../destination.types';

const NEWLINE = 0x0a;

/** Pulled as rows are consumed, one line in memory; split on bytes and decoded whole (multi-byte characters). */
export class JsonLinesReader<Row extends object = ExportedEventRow> {
  bytesRead = 0;
  rowsRead = 0;

  constructor(
    private readonly body: Readable,
    private readonly rowKind: RowKind<Row> = EVENT_ROWS as unknown as RowKind<Row>,
  ) {}

  /** Leaving the loop early (or throwing) destroys the body stream. */
  async *rows(): AsyncGenerator<Row> {
    let pending: Buffer[] = [];
    for await (const data of this.body as AsyncIterable<Buffer | Uint8Array | string>) {
      const buffer = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
      this.bytesRead += buffer.length;
      let start = 0;
      for (
        let newline = buffer.indexOf(NEWLINE, start);
        newline !== -1;
        newline = buffer.indexOf(NEWLINE, start)
      ) {
        const piece = buffer.subarray(start, newline);
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        start = newline + 1;
        const row = this.parse(line);
        if (row !== undefined) yield row;
      }
      if (start < buffer.length) pending.push(buffer.subarray(start));
    }
    if (pending.length > 0) {
      const row = this.parse(Buffer.concat(pending));
      if (row !== undefined) yield row;
    }
  }

  private parse(line: Buffer): Row | undefined {
    const text = line.toString('utf8').trim();
    if (text === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // NOTE: retried: a body cut short by a dropped ClickHouse connection ends in half a line.
      throw new Error(`Row ${this.rowsRead + 1} of the chunk is not JSON: ${text.slice(0, 80)}`, {
        cause: error,
      });
    }
    if (value === null || typeof value !== 'object' || !this.rowKind.accepts(value)) {
      throw new NonRetryableExportError(`Row ${this.rowsRead + 1} of the chunk is not ${this.rowKind.name}`);
    }
    this.rowsRead += 1;
    return value;
  }
}

export interface RowKind<Row extends object> {
  name: string;
  accepts(value: object): value is Row;
}

export const EVENT_ROWS: RowKind<ExportedEventRow> = {
  name: 'an exported event (an object with a uuid)',
  accepts: (value): value is ExportedEventRow => typeof (value as { uuid?: unknown }).uuid === 'string',
};

export const PERSON_ROWS: RowKind<ExportedPersonRow> = {
  name: 'an exported person (an object with a team_id, a distinct_id and their versions)',
  accepts: (value): value is ExportedPersonRow => {
    const row = value as Partial<Record<keyof ExportedPersonRow, unknown>>;
    return (
      typeof row.team_id === 'number' &&
      typeof row.distinct_id === 'string' &&
      typeof row.person_version === 'number' &&
      typeof row.person_distinct_id_version === 'number'
    );
  },
};

export class DestinationConfigReader {
  constructor(
    private readonly destination: string,
    private readonly config: Record<string, unknown>,
  ) {}

  requiredString(key: string): string {
    const value = this.optionalString(key);
    if (value === undefined || value === '') {
      throw new NonRetryableExportError(`${this.destination} destination: config.${key} is required`);
    }
    return value;
  }

  optionalString(key: string, fallback?: string): string | undefined {
    const value = this.config[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') {
      throw new NonRetryableExportError(`${this.destination} destination: config.${key} must be a string`);
    }
    return value;
  }

  /** A string of digits too: forms send ports as text. */
  positiveInteger(key: string, fallback: number): number {
    const value = this.config[key];
    if (value === undefined || value === null || value === '') return fallback;
    const parsed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof parsed !== 'number' || !Number.isSafeInteger(parsed) || parsed <= 0) {
      throw new NonRetryableExportError(
        `${this.destination} destination: config.${key} must be a positive integer`,
      );
    }
    return parsed;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.config[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    throw new NonRetryableExportError(`${this.destination} destination: config.${key} must be true or false`);
  }
}

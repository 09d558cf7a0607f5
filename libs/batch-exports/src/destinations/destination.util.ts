import type { Readable } from 'node:stream';
import { NonRetryableExportError, type ExportedEventRow } from '../destination.types';

const NEWLINE = 0x0a;

/**
 * Reads a `JSONEachRow` chunk body one line at a time, pulling from the stream only as fast as the
 * caller consumes rows, so memory holds one line (plus the stream's buffer), never the chunk.
 * Lines are split on bytes and decoded whole, so a multi-byte character cut across two stream
 * chunks decodes correctly.
 */
export class JsonLinesReader {
  /** Bytes read from the body so far. */
  bytesRead = 0;
  /** Rows yielded so far. */
  rowsRead = 0;

  constructor(private readonly body: Readable) {}

  /** Yields each row; leaving the loop early (or throwing) destroys the body stream. */
  async *rows(): AsyncGenerator<ExportedEventRow> {
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

  private parse(line: Buffer): ExportedEventRow | undefined {
    const text = line.toString('utf8').trim();
    if (text === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // NOTE: a plain error (retried): a body cut short by a dropped ClickHouse connection ends
      // in half a line, and reading the chunk again fixes that.
      throw new Error(`Row ${this.rowsRead + 1} of the chunk is not JSON: ${text.slice(0, 80)}`, {
        cause: error,
      });
    }
    if (
      value === null ||
      typeof value !== 'object' ||
      typeof (value as { uuid?: unknown }).uuid !== 'string'
    ) {
      throw new NonRetryableExportError(
        `Row ${this.rowsRead + 1} of the chunk is not an exported event (an object with a uuid)`,
      );
    }
    this.rowsRead += 1;
    return value as ExportedEventRow;
  }
}

/** Reads one key of a destination config, refusing a wrong type with a NonRetryableExportError. */
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

  /** A positive integer; a string of digits is accepted too (forms send ports as text). */
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

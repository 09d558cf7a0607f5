import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Pool, PoolClient } from 'pg';

/**
 * The Postgres queries of a persons run: which rows it exports, in which order, in which shape.
 * The rule (see libs/workers/README.md, "Which persons a run exports"):
 *
 * - a row is a distinct id with its person: PostHog's persons model, one row per
 *   (team_id, distinct_id);
 * - a row belongs to the interval `[start, end)` that contains the time it **last changed**: the
 *   later of its person's and its distinct id's `updated_at` (a trigger stamps both on every write).
 *   One such time per row, so no two runs export the same version of a row; a row that changes
 *   again goes out again, with the run of its new change;
 * - rows go out in (changed time, distinct_id) order, unique within a project; the run's cursor is
 *   the last pair a destination took.
 *
 * Postgres builds each row's JSON line itself, and a chunk is read through a server-side cursor a
 * page at a time: nothing holds a chunk, let alone an interval, in memory.
 */

export interface PersonsSelection {
  teamId: number;
  /** Null: everything before `end` (a backfill from the beginning). */
  start: Date | null;
  end: Date;
}

/** Where a persons run is: after the row (changedAt, distinctId), or at the start. */
export interface PersonsCursor {
  /** ISO 8601 in UTC with microseconds, as Postgres stores it. */
  changedAt: string;
  distinctId: string;
}

/** Marks a persons cursor, so that it is never read as an events cursor (`timestamp|uuid`) or the reverse. */
const CURSOR_PREFIX = 'persons:';

export function encodePersonsCursor(cursor: PersonsCursor): string {
  // JSON: a distinct id may hold any character, the separators of a hand-made format included.
  return `${CURSOR_PREFIX}${JSON.stringify([cursor.changedAt, cursor.distinctId])}`;
}

export function isPersonsCursor(text: string | null): boolean {
  return text?.startsWith(CURSOR_PREFIX) ?? false;
}

export function decodePersonsCursor(text: string | null): PersonsCursor | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = isPersonsCursor(text) ? JSON.parse(text.slice(CURSOR_PREFIX.length)) : undefined;
  } catch {
    value = undefined;
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    typeof value[0] !== 'string' ||
    typeof value[1] !== 'string' ||
    Number.isNaN(Date.parse(value[0]))
  ) {
    throw new Error(`not a persons run cursor: ${text}`);
  }
  return { changedAt: value[0], distinctId: value[1] };
}

/** ISO 8601, UTC, microseconds: the exported timestamps and the cursor's. */
function isoTime(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * One line of PostHog's persons model, fields in PostHog's order. `_inserted_at` is the change
 * that put the row in this run; `is_deleted` is always false: a person merged away has no
 * distinct ids left (they moved to the person it merged into), and persons are not deleted otherwise.
 */
const LINE = `json_build_object(
    'team_id', rows.team_id,
    'distinct_id', rows.distinct_id,
    'person_id', rows.person_uuid,
    'properties', rows.properties,
    'person_distinct_id_version', rows.distinct_id_version,
    'person_version', rows.person_version,
    'created_at', ${isoTime('rows.created_at')},
    '_inserted_at', ${isoTime('rows.changed_at')},
    'is_deleted', false
  )::text`;

const ROW_COLUMNS = `d.team_id, d.distinct_id, d.version AS distinct_id_version, p.uuid AS person_uuid,
       p.properties, p.version AS person_version, p.created_at`;

interface BuiltQuery {
  text: string;
  values: unknown[];
}

/**
 * The run's rows as two disjoint branches, each served by an index in changed-time order: rows
 * whose distinct id changed last (or with its person), and rows whose person changed last. The
 * later of two times is in `[start, end)` exactly when both are before `end` and one is at or
 * after `start`.
 */
function branches(
  selection: PersonsSelection,
  after: PersonsCursor | undefined,
): { distinctIdLast: string; personLast: string; values: unknown[] } {
  const values: unknown[] = [selection.teamId, selection.end];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const start = selection.start ? param(selection.start) : undefined;
  const afterTime = after ? param(after.changedAt) : undefined;
  const afterId = after ? param(after.distinctId) : undefined;
  const bounds = (changedAt: string) =>
    [
      `${changedAt} < $2`,
      start ? `${changedAt} >= ${start}` : undefined,
      // The first condition lets the index start at the cursor; the second is the exact keyset.
      afterTime ? `${changedAt} >= ${afterTime}::timestamptz` : undefined,
      afterTime ? `(${changedAt}, d.distinct_id) > (${afterTime}::timestamptz, ${afterId}::text)` : undefined,
    ]
      .filter((condition) => condition !== undefined)
      .join(' AND ');
  return {
    distinctIdLast: `SELECT d.updated_at AS changed_at, ${ROW_COLUMNS}
       FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
      WHERE d.team_id = $1 AND p.updated_at <= d.updated_at AND ${bounds('d.updated_at')}`,
    personLast: `SELECT p.updated_at AS changed_at, ${ROW_COLUMNS}
       FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
      WHERE p.team_id = $1 AND d.team_id = $1 AND d.updated_at < p.updated_at AND ${bounds('p.updated_at')}`,
    values,
  };
}

/** How many rows the run exports in all (its `records_total_count`). */
export function personsCountQuery(selection: PersonsSelection): BuiltQuery {
  const { distinctIdLast, personLast, values } = branches(selection, undefined);
  return {
    text: `SELECT (SELECT count(*) FROM (${distinctIdLast}) a) + (SELECT count(*) FROM (${personLast}) b) AS rows`,
    values,
  };
}

/** The next chunk's rows after `after`, at most `maxRows`, in order, each with its JSON line. */
export function personsChunkQuery(
  selection: PersonsSelection,
  after: PersonsCursor | undefined,
  maxRows: number,
): BuiltQuery {
  const { distinctIdLast, personLast, values } = branches(selection, after);
  values.push(maxRows);
  const limit = `$${values.length}::bigint`;
  const order = 'ORDER BY changed_at, distinct_id';
  return {
    text: `SELECT ${isoTime('rows.changed_at')} AS changed_at, rows.distinct_id, ${LINE} AS line
       FROM ((${distinctIdLast} ${order} LIMIT ${limit}) UNION ALL (${personLast} ${order} LIMIT ${limit})) rows
      ORDER BY rows.changed_at, rows.distinct_id LIMIT ${limit}`,
    values,
  };
}

export async function countPersonRows(pool: Pool, selection: PersonsSelection): Promise<number> {
  const { text, values } = personsCountQuery(selection);
  const { rows } = await pool.query<{ rows: string }>(text, values);
  return Number(rows[0]?.rows ?? 0);
}

export interface PersonsChunk {
  /** The chunk's JSON lines, read from the server a page at a time as the destination pulls. */
  body: Readable;
  records: number;
  /** The last row's position: the run's cursor once the destination took the chunk. */
  until: PersonsCursor;
  /** Ends the body if the destination left it unread, and frees the server's cursor and the connection. */
  close(): Promise<void>;
}

/** Rows fetched from the server per page of a chunk's body. */
const PAGE_ROWS = 1_000;

/**
 * Opens the next chunk after `after`: undefined when the run has no rows left.
 *
 * TRICKY: the chunk is a holdable cursor (`WITH HOLD`), materialized by Postgres when its
 * statement ends, and read with one FETCH per page outside any transaction. A transaction held
 * open while a destination uploads would pin the snapshot on a server, and on the embedded
 * engine (PGlite serves one session to every connection) hold up every other query of the
 * process until the chunk is written.
 */
export async function openPersonsChunk(
  pool: Pool,
  selection: PersonsSelection,
  after: PersonsCursor | undefined,
  maxRows: number,
): Promise<PersonsChunk | undefined> {
  const client = await pool.connect();
  // Unique: the embedded engine's connections share one session, hence one cursor namespace.
  const cursorName = `persons_export_${randomBytes(8).toString('hex')}`;
  let declared = false;
  let released = false;
  const release = async (error?: Error) => {
    if (released) return;
    released = true;
    if (declared) {
      declared = false;
      await client.query(`CLOSE ${cursorName}`).catch((closeError: unknown) => {
        error ??= closeError instanceof Error ? closeError : new Error(String(closeError));
      });
    }
    // A client whose connection failed is discarded rather than reused.
    client.release(error);
  };
  try {
    const { text, values } = personsChunkQuery(selection, after, maxRows);
    await client.query(`DECLARE ${cursorName} SCROLL CURSOR WITH HOLD FOR ${text}`, values);
    declared = true;
    const moved = await client.query(`MOVE FORWARD ALL IN ${cursorName}`);
    const records = moved.rowCount ?? 0;
    if (records === 0) {
      await release();
      return undefined;
    }
    const last = await client.query<{ changed_at: string; distinct_id: string }>(
      `FETCH PRIOR FROM ${cursorName}`,
    );
    await client.query(`MOVE ABSOLUTE 0 IN ${cursorName}`);
    const lastRow = last.rows[0];
    if (!lastRow) throw new Error(`persons chunk cursor ${cursorName} lost its last row`);
    const body = new PersonsChunkBody(client, cursorName, release);
    return {
      body,
      records,
      until: { changedAt: lastRow.changed_at, distinctId: lastRow.distinct_id },
      close: () => body.close(),
    };
  } catch (error) {
    await release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/** A chunk's lines, one FETCH per read; destroying it (or reaching its end) frees the cursor. */
class PersonsChunkBody extends Readable {
  /** The FETCH in flight: the connection takes the CLOSE only once it answered. */
  private fetching: Promise<void> | undefined;
  /** A failed FETCH: the connection may be broken, so it is discarded rather than reused. */
  private fetchError: Error | undefined;
  private readonly released: Promise<void>;
  private resolveReleased!: () => void;

  constructor(
    private readonly client: PoolClient,
    private readonly cursorName: string,
    private readonly release: (error?: Error) => Promise<void>,
  ) {
    super();
    this.released = new Promise((resolve) => {
      this.resolveReleased = resolve;
    });
  }

  override _read(): void {
    if (this.fetching) return;
    this.fetching = this.client
      .query<{ line: string }>(`FETCH FORWARD ${PAGE_ROWS} FROM ${this.cursorName}`)
      .then(
        ({ rows }) => {
          this.fetching = undefined;
          if (rows.length === 0) this.push(null);
          else this.push(rows.map((row) => `${row.line}\n`).join(''));
        },
        (error: unknown) => {
          this.fetching = undefined;
          this.fetchError = error instanceof Error ? error : new Error(String(error));
          this.destroy(this.fetchError);
        },
      );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    void (this.fetching ?? Promise.resolve())
      .then(() => this.release(this.fetchError))
      .finally(() => {
        this.resolveReleased();
        callback(error);
      });
  }

  /** Destroys the body if it is not yet, and resolves once the cursor and connection are freed. */
  close(): Promise<void> {
    if (!this.destroyed) this.destroy();
    return this.released;
  }
}

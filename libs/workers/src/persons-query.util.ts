import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Pool, PoolClient } from 'pg';

// A persons run's queries (the rule: libs/workers/README.md). Postgres builds each JSON line, and a
// chunk is read through a server-side cursor a page at a time.

export interface PersonsSelection {
  teamId: number;
  /** Null: everything before `end` (a backfill from the beginning). */
  start: Date | null;
  end: Date;
}

export interface PersonsCursor {
  /** ISO 8601 in UTC with microseconds, as Postgres stores it. */
  changedAt: string;
  distinctId: string;
}

/** Never read as an events cursor (`timestamp|uuid`), or the reverse. */
const CURSOR_PREFIX = 'persons:';

export function encodePersonsCursor(cursor: PersonsCursor): string {
  // JSON: a distinct id may hold any character.
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

function isoTime(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/** `is_deleted` is always false: a person merged away has no distinct ids left, and none is deleted otherwise. */
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
 * Two disjoint branches, each served by an index in changed-time order: rows whose distinct id
 * changed last, and rows whose person did.
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
      // The first lets the index start at the cursor; the second is the exact keyset.
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

export function personsCountQuery(selection: PersonsSelection): BuiltQuery {
  const { distinctIdLast, personLast, values } = branches(selection, undefined);
  return {
    text: `SELECT (SELECT count(*) FROM (${distinctIdLast}) a) + (SELECT count(*) FROM (${personLast}) b) AS rows`,
    values,
  };
}

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
  body: Readable;
  records: number;
  until: PersonsCursor;
  /** Frees the server's cursor and the connection, even if the body was left unread. */
  close(): Promise<void>;
}

const PAGE_ROWS = 1_000;

/**
 * Undefined when the run has no rows left. A holdable cursor (`WITH HOLD`) read outside any
 * transaction: one held open during an upload would pin the snapshot, and on PGlite hold up every query.
 */
export async function openPersonsChunk(
  pool: Pool,
  selection: PersonsSelection,
  after: PersonsCursor | undefined,
  maxRows: number,
): Promise<PersonsChunk | undefined> {
  const client = await pool.connect();
  // Unique: PGlite's connections share one session, hence one cursor namespace.
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

/** One FETCH per read; destroying it (or reaching its end) frees the cursor. */
class PersonsChunkBody extends Readable {
  /** The connection takes the CLOSE only once this answered. */
  private fetching: Promise<void> | undefined;
  /** The connection may be broken: discarded rather than reused. */
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

  close(): Promise<void> {
    if (!this.destroyed) this.destroy();
    return this.released;
  }
}

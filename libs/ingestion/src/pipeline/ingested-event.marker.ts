import type { Pool } from 'pg';
import type { Logger } from 'pino';

export interface IngestedEventMarkerOptions {
  /** Past it the memory starts again (a repeated UPDATE is a no-op). */
  maxEntries?: number;
}

/**
 * Sets `teams.ingested_event` at a project's first stored event, as PostHog's ingestion does. The
 * `NOT ingested_event` guard matters: the teams trigger (hogbase_project_changed) makes capture
 * reload the project, and an UPDATE that matches no row fires no row trigger.
 */
export class IngestedEventMarker {
  private readonly known = new Set<number>();
  private readonly maxEntries: number;
  private failing = false;

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    options: IngestedEventMarkerOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  /** Never throws: a project left unmarked by a failure is tried again with its next batch. */
  async stored(teamIds: Iterable<number>): Promise<void> {
    const unknown = new Set<number>();
    for (const teamId of teamIds) if (!this.known.has(teamId)) unknown.add(teamId);
    if (unknown.size === 0) return;
    const ids = [...unknown];
    try {
      await this.pool.query(
        'UPDATE teams SET ingested_event = true WHERE id = ANY($1::int[]) AND NOT ingested_event',
        [ids],
      );
    } catch (error) {
      if (!this.failing)
        this.logger.warn({ err: error }, 'cannot mark projects as having ingested events yet');
      this.failing = true;
      return;
    }
    if (this.failing) this.logger.info('projects are marked as having ingested events again');
    this.failing = false;
    if (this.known.size + ids.length > this.maxEntries) this.known.clear();
    for (const teamId of ids) this.known.add(teamId);
  }
}

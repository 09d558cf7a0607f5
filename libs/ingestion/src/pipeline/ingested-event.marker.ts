import type { Pool } from 'pg';
import type { Logger } from 'pino';

export interface IngestedEventMarkerOptions {
  /** Projects remembered at most; past it the memory starts again (a repeated UPDATE is a no-op). */
  maxEntries?: number;
}

/**
 * Sets `teams.ingested_event` once a project's first event is stored, as PostHog's ingestion does
 * (onboarding and data connectors read it). Each process remembers the projects it knows are set,
 * so the hot path costs a Set lookup; a project it has not seen yet costs one UPDATE per batch,
 * for all such projects together, guarded by `NOT ingested_event`.
 *
 * NOTE: the teams table's trigger tells capture that the project changed (hogbase_project_changed,
 * migration AddRemoteConfigAndSecretKeys), and capture then reloads what it cached for it. The
 * guard makes that happen once per project, at its first event: an UPDATE that matches no row
 * fires no row trigger, whichever process (or restart) runs it again.
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

  /**
   * Marks the projects of events just stored. Never throws: the events are stored whatever happens
   * to the flag, and a project left unmarked by a failure is tried again with its next batch.
   */
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

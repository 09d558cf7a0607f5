import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

/** PostHog's QueryStatus (frontend/src/queries/schema/schema-general.ts). */
export interface QueryStatus {
  id: string;
  team_id: number;
  query_async: true;
  complete: boolean;
  error: boolean;
  error_message: string | null;
  results: unknown;
  start_time: string;
  end_time: string | null;
  pickup_time: string | null;
  expiration_time: string | null;
  task_id: string | null;
  query_progress: null;
  labels: null;
  dashboard_id: null;
  insight_id: null;
}

interface QueryTask {
  status: QueryStatus;
  abort: AbortController;
  /** The ClickHouse query id, which a cancel kills. */
  clickhouseQueryId: string;
}

/** How long a finished query's status can be read. */
const KEEP_MS = 30 * 60 * 1000;

/**
 * Async queries of this process: they live as long as it does (a restart forgets them, as PostHog's
 * expire). SECURITY: a status is found only with the project that started it.
 */
@Injectable()
export class QueryTasks {
  private readonly tasks = new LRUCache<string, QueryTask>({ max: 10_000, ttl: KEEP_MS });

  /** Starts `work` now; its outcome becomes the status's. A client id names the task if given. */
  start(
    teamId: number,
    id: string,
    clickhouseQueryId: string,
    work: (signal: AbortSignal) => Promise<unknown>,
    describeError: (error: unknown) => string | null,
  ): QueryStatus {
    const now = new Date().toISOString();
    const task: QueryTask = {
      abort: new AbortController(),
      clickhouseQueryId,
      status: {
        id,
        team_id: teamId,
        query_async: true,
        complete: false,
        error: false,
        error_message: null,
        results: null,
        start_time: now,
        end_time: null,
        pickup_time: now,
        expiration_time: new Date(Date.now() + KEEP_MS).toISOString(),
        task_id: id,
        query_progress: null,
        labels: null,
        dashboard_id: null,
        insight_id: null,
      },
    };
    this.tasks.set(this.key(teamId, id), task);
    work(task.abort.signal).then(
      (results) => this.finish(task, { results }),
      (error: unknown) =>
        this.finish(task, {
          error: true,
          error_message: task.abort.signal.aborted ? 'Query cancelled.' : describeError(error),
        }),
    );
    return { ...task.status };
  }

  get(teamId: number, id: string): QueryStatus | undefined {
    const task = this.tasks.get(this.key(teamId, id));
    return task ? { ...task.status } : undefined;
  }

  /** Stops the task; the ClickHouse query id to kill, or undefined when the project has no such task. */
  cancel(teamId: number, id: string): { clickhouseQueryId: string; running: boolean } | undefined {
    const task = this.tasks.get(this.key(teamId, id));
    if (!task) return undefined;
    const running = !task.status.complete;
    if (running) task.abort.abort(new Error('Query cancelled.'));
    return { clickhouseQueryId: task.clickhouseQueryId, running };
  }

  private finish(task: QueryTask, outcome: Partial<QueryStatus>): void {
    Object.assign(task.status, { ...outcome, complete: true, end_time: new Date().toISOString() });
  }

  private key(teamId: number, id: string): string {
    return `${teamId}:${id}`;
  }
}

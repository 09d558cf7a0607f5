import { Client, type ClientConfig } from 'pg';
import type { Logger } from 'pino';

/** Notified by the triggers of libs/postgres's AddRemoteConfigAndSecretKeys migration. */
export const PROJECT_CHANGED_CHANNEL = 'hogbase_project_changed';

/** Told which project changed, or null when any may have (`*`, or notifications were missed). */
export type ProjectChangeHandler = (teamId: number | null) => void;

export interface ProjectChangeListenerOptions {
  /** First wait before connecting again; doubled up to MAX_RETRY_MS. */
  retryMs?: number;
}

const MAX_RETRY_MS = 30_000;

/**
 * Drops what capture caches per project as soon as a change commits. NOTE: notifications sent while
 * disconnected are lost, so each (re)connection forgets every project; TTLs bound staleness meanwhile.
 */
export class ProjectChangeListener {
  private readonly handlers: ProjectChangeHandler[] = [];
  /** Events of older connections are ignored. */
  private client: Client | null = null;
  private connected = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs: number;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly connection: ClientConfig,
    private readonly logger: Pick<Logger, 'warn' | 'info' | 'debug'>,
    private readonly options: ProjectChangeListenerOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1_000;
  }

  get listening(): boolean {
    return this.connected;
  }

  onChange(handler: ProjectChangeHandler): void {
    this.handlers.push(handler);
  }

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    this.connected = false;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    this.retryTimer = null;
    if (this.stopped) return;
    const client = new Client({ ...this.connection, application_name: 'capture-listener', keepAlive: true });
    this.client = client;
    // pg emits 'error' on a connection that dies; unhandled, it would crash the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', ({ channel, payload }) => {
      if (channel !== PROJECT_CHANGED_CHANNEL) return;
      const teamId = Number(payload);
      this.notify(Number.isSafeInteger(teamId) && teamId > 0 ? teamId : null);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PROJECT_CHANGED_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      await client.end().catch(() => undefined);
      return;
    }
    if (this.client !== client) return;
    this.connected = true;
    this.retryMs = this.options.retryMs ?? 1_000;
    if (this.failing) this.logger.info('project change notifications received again');
    this.failing = false;
    this.notify(null);
  }

  private lost(client: Client, error: unknown): void {
    if (this.stopped || this.client !== client) return;
    this.client = null;
    this.connected = false;
    if (!this.failing) {
      this.logger.warn(
        { err: error },
        'project change notifications lost: cached project settings expire by TTL until the connection is back',
      );
    }
    this.failing = true;
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  private notify(teamId: number | null): void {
    this.logger.debug({ teamId }, 'project changed');
    for (const handler of this.handlers) handler(teamId);
  }
}

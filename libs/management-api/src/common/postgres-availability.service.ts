import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { PostgresProbeRepository } from './postgres-probe.repository';

/** Back-off of the checks while Postgres is unavailable: 1 s, doubled up to this. */
const FIRST_CHECK_MS = 1_000;
const MAX_CHECK_MS = 15_000;

/**
 * Logs an outage once when it starts and once when it ends, not once per refused request. During
 * one, Postgres is polled: nothing else would tell an idle process that it is over.
 */
@Injectable()
export class PostgresAvailability implements OnModuleDestroy {
  private readonly logger = new Logger('Postgres');
  private outage: { since: number; checks: number; timer?: NodeJS.Timeout } | undefined;
  private stopped = false;

  constructor(private readonly probe: PostgresProbeRepository) {}

  get available(): boolean {
    return this.outage === undefined;
  }

  failed(error: unknown): void {
    if (this.outage || this.stopped) return;
    this.outage = { since: Date.now(), checks: 0 };
    const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
    this.logger.warn(
      { reason: typeof message === 'string' ? message : String(error), code },
      'Postgres unavailable: requests that need it are answered 503 until it answers again',
    );
    this.checkLater();
  }

  answered(): void {
    const outage = this.outage;
    if (!outage) return;
    clearTimeout(outage.timer);
    this.outage = undefined;
    this.logger.log({ unavailableMs: Date.now() - outage.since }, 'Postgres answers again');
  }

  onModuleDestroy(): void {
    this.stopped = true;
    clearTimeout(this.outage?.timer);
  }

  private checkLater(): void {
    const outage = this.outage;
    if (!outage || this.stopped) return;
    const delay = Math.min(FIRST_CHECK_MS * 2 ** outage.checks++, MAX_CHECK_MS);
    outage.timer = setTimeout(() => void this.check(), delay);
    // A process stopping during an outage does not wait for the next check.
    outage.timer.unref();
  }

  private async check(): Promise<void> {
    try {
      await this.probe.ping();
      this.answered();
    } catch {
      this.checkLater();
    }
  }
}

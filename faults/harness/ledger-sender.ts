import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SenderOptions {
  captureUrl: string;
  apiKey: string;
  /** Default 1,000. */
  eventsPerSecond?: number;
  /** Default 50, posthog-node's flush size. */
  batchSize?: number;
  persons?: number;
  /** So scenarios of one project can be told apart. */
  label: string;
}

export interface SenderReport {
  /** Each posted until acknowledged. */
  sent: number;
  /** Answered 200: each must be listed exactly once. */
  acknowledged: number;
  /** Each retried with the same events. */
  failedAttempts: number;
  /** By HTTP status or network error code. */
  failures: Record<string, number>;
  distinctIds: string[];
}

const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 2_000;
const REQUEST_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 120_000;

/**
 * An SDK that never gives up: posts `/batch/` at a steady rate and retries a failed request with the
 * same events (uuids, timestamps) until answered 200. After a fault, each acknowledged uuid must be
 * listed exactly once.
 */
export class LedgerSender {
  readonly ledger = new Set<string>();
  private readonly failures: Record<string, number> = {};
  private failedAttempts = 0;
  private sent = 0;
  private running = false;
  private abandoned = false;
  private readonly inFlight = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  private readonly distinctIds: string[];
  private readonly eventsPerSecond: number;
  private readonly batchSize: number;

  constructor(private readonly options: SenderOptions) {
    this.eventsPerSecond = options.eventsPerSecond ?? 1_000;
    this.batchSize = options.batchSize ?? 50;
    this.distinctIds = Array.from({ length: options.persons ?? 200 }, (_, i) => `${options.label}-user-${i}`);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  get pending(): number {
    return this.inFlight.size;
  }

  /** Waits until every request made so far is acknowledged; throws after `timeoutMs`. */
  async stop(timeoutMs = STOP_TIMEOUT_MS): Promise<SenderReport> {
    this.running = false;
    await this.loop;
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0) {
      if (Date.now() > deadline) {
        this.abandoned = true;
        throw new Error(
          `${this.inFlight.size} requests still not acknowledged ${timeoutMs} ms after the sender stopped: ` +
            JSON.stringify(this.failures),
        );
      }
      await sleep(100);
    }
    return {
      sent: this.sent,
      acknowledged: this.ledger.size,
      failedAttempts: this.failedAttempts,
      failures: { ...this.failures },
      distinctIds: this.distinctIds,
    };
  }

  private async run(): Promise<void> {
    const intervalMs = (1_000 * this.batchSize) / this.eventsPerSecond;
    let next = Date.now();
    let sequence = 0;
    while (this.running) {
      const delivery = this.deliver(this.makeBatch(sequence++));
      this.inFlight.add(delivery);
      void delivery.finally(() => this.inFlight.delete(delivery));
      next += intervalMs;
      // While capture is down, requests pile up waiting: the sender keeps its rate, as SDKs do.
      await sleep(Math.max(0, next - Date.now()));
    }
  }

  private makeBatch(sequence: number): { uuid: string; body: Record<string, unknown> }[] {
    const now = Date.now();
    this.sent += this.batchSize;
    return Array.from({ length: this.batchSize }, (_, i) => {
      const uuid = randomUUID();
      const distinctId = this.distinctIds[(sequence * this.batchSize + i) % this.distinctIds.length];
      return {
        uuid,
        body: {
          event: i % 10 === 0 ? '$pageview' : 'fault suite event',
          distinct_id: distinctId,
          uuid,
          timestamp: new Date(now).toISOString(),
          properties: { sequence, index: i, $lib: 'hogbase-fault-suite', $set: { last_sequence: sequence } },
        },
      };
    });
  }

  private async deliver(events: { uuid: string; body: Record<string, unknown> }[]): Promise<void> {
    const payload = JSON.stringify({ api_key: this.options.apiKey, batch: events.map((e) => e.body) });
    for (let attempt = 1; !this.abandoned; attempt++) {
      const outcome = await this.post(payload);
      if (outcome === 'ok') {
        for (const { uuid } of events) this.ledger.add(uuid);
        return;
      }
      this.failedAttempts++;
      this.failures[outcome] = (this.failures[outcome] ?? 0) + 1;
      await sleep(Math.min(RETRY_INITIAL_MS * 2 ** (attempt - 1), RETRY_MAX_MS));
    }
  }

  /** 'ok', or an HTTP status or network error code. */
  private async post(payload: string): Promise<string> {
    try {
      const response = await fetch(`${this.options.captureUrl}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: payload,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      return response.status === 200 ? 'ok' : `HTTP ${response.status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      return cause?.code ?? (error as Error).name;
    }
  }
}

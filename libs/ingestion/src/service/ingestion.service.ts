import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AppDestinations, AppTransformations, createAppsRuntime } from '@hogbase/apps-runtime';
import type { ClickHouseClient, EventsWriter } from '@hogbase/clickhouse';
import type { IngestionConfig } from '@hogbase/config';
import { sleep, type EventConsumer, type EventPublisher } from '@hogbase/queue';
import { checkReadiness, type CheckResult, type RunningService } from '@hogbase/service-runtime';
import { PersonProcessor } from '../persons/person-processor.service';
import { EventBatchHandler } from '../pipeline/event-batch.handler';
import { IngestedEventMarker } from '../pipeline/ingested-event.marker';
import { TeamTokenCache } from '../pipeline/team-token.cache';
import { prepareEventStores } from './event-stores.util';

/** The caller opened them and closes them after `stop()`. */
export interface IngestionEngines {
  pool: Pool;
  clickhouse: ClickHouseClient;
  events: EventsWriter;
  consumer: EventConsumer;
  deadLetters: EventPublisher;
  logger: Logger;
  /** The pipeline apps' job engine (pg-boss); omitted: no destinations (bare ingestion for a bench). */
  databaseUrl?: string;
}

const START_RETRY_INITIAL_MS = 500;
const START_RETRY_MAX_MS = 15_000;
/** How long stop() waits for a start-up attempt in progress to give up. */
const STOP_START_WAIT_MS = 5_000;
/** A batch written this recently proves both stores answer: a probe waiting on a busy pool would not. */
const RECENT_WRITE_MS = 10_000;

type StartState =
  { phase: 'preparing' | 'joining'; lastError?: string } | { phase: 'consuming' } | { phase: 'stopped' };

function consumerCheck(consumer: EventConsumer): CheckResult {
  const { ready, reason } = consumer.ready();
  return ready || (reason ?? 'the consumer is not consuming');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Returns at once: the event stores are prepared and the group joined in the background, retried
 * while a dependency is down, so the process serves its probes (not ready) and never exits over an
 * outage. Ready: Postgres and ClickHouse answer, and the consumer is consuming.
 */
export function startIngestionService(
  config: IngestionConfig,
  engines: IngestionEngines,
): Promise<RunningService> {
  const { pool, clickhouse, events, consumer, deadLetters, logger } = engines;
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics, prefix: 'ingestion_' });
  const apps = engines.databaseUrl ? createAppsRuntime(pool, config.apps, logger) : undefined;
  const destinations =
    apps && engines.databaseUrl
      ? new AppDestinations({
          pool,
          connectionString: engines.databaseUrl,
          apps: apps.apps,
          log: apps.log,
          fetch: apps.services.fetch,
          logger,
          registry: metrics,
        })
      : undefined;
  destinations?.start();
  const transformations = apps ? new AppTransformations(pool, apps.apps, logger, metrics) : undefined;
  const handler = new EventBatchHandler({
    persons: new PersonProcessor(pool),
    events,
    deadLetters,
    tokens: new TeamTokenCache(pool),
    ingestedEvents: new IngestedEventMarker(pool, logger),
    logger,
    registry: metrics,
    transformations,
    destinations,
  });

  let state: StartState = { phase: 'preparing' };
  let lastWrittenAt = Number.NEGATIVE_INFINITY;

  const wroteRecently = () => Date.now() - lastWrittenAt < RECENT_WRITE_MS;
  const stopSignal = new AbortController();

  /** Logs each new reason once, not each retry. */
  const untilDone = async (phase: 'preparing' | 'joining', what: string, step: () => Promise<void>) => {
    state = { phase };
    for (let attempt = 1; !stopSignal.signal.aborted; attempt++) {
      try {
        await step();
        return true;
      } catch (error) {
        if (stopSignal.signal.aborted) break;
        const reason = messageOf(error);
        if (state.phase === phase && state.lastError !== reason) {
          logger.warn({ err: error, attempt }, `ingestion cannot ${what} yet; retrying until it can`);
        }
        state = { phase, lastError: reason };
        await sleep(
          Math.min(START_RETRY_INITIAL_MS * 2 ** (attempt - 1), START_RETRY_MAX_MS),
          stopSignal.signal,
        );
      }
    }
    return false;
  };

  const starting = (async () => {
    const prepared = await untilDone('preparing', 'prepare ClickHouse and the Kafka topics', () =>
      prepareEventStores({
        clickhouse: {
          client: clickhouse,
          database: config.clickhouse.database,
          cluster: config.clickhouse.cluster,
        },
        kafka: config.kafka.brokers ? config.kafka : undefined,
        logger,
      }),
    );
    if (!prepared) return;
    const joined = await untilDone('joining', 'start consuming', () =>
      consumer.startDecoding({
        decode: handler.decode,
        handle: async (batch) => {
          await handler.handle(batch);
          lastWrittenAt = Date.now();
        },
      }),
    );
    if (!joined || stopSignal.signal.aborted) return;
    state = { phase: 'consuming' };
    logger.info(
      { queue: config.kafka.brokers ? `Kafka group ${config.kafka.consumerGroupId}` : 'in-process bus' },
      'ingestion consuming',
    );
  })();

  const queueCheck = (): CheckResult => {
    switch (state.phase) {
      case 'preparing':
        return `preparing the event stores${state.lastError ? `: ${state.lastError}` : ''}`;
      case 'joining': {
        const own = consumer.ready();
        const reason = state.lastError ?? (own.ready ? undefined : own.reason);
        return `joining the consumer group${reason ? `: ${reason}` : ''}`;
      }
      case 'stopped':
        return 'stopped';
      case 'consuming':
        return consumerCheck(consumer);
    }
  };

  return Promise.resolve({
    metrics,
    ready: () =>
      checkReadiness({
        required: {
          queue: queueCheck,
          postgres: async () => {
            if (!wroteRecently()) await pool.query('SELECT 1');
            return true;
          },
          clickhouse: async () => {
            if (wroteRecently()) return true;
            const result = await clickhouse.ping();
            return result.success || messageOf(result.error);
          },
          ...(destinations ? { destinations: () => destinations.ready() } : {}),
        },
      }),
    async stop() {
      stopSignal.abort();
      state = { phase: 'stopped' };
      await consumer.stop();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        starting,
        new Promise((resolve) => (timer = setTimeout(resolve, STOP_START_WAIT_MS))),
      ]);
      clearTimeout(timer);
      // Deliveries in flight finish (or go back to the job engine); then the apps' teardownPlugin runs.
      await destinations?.stop();
      await apps?.close();
    },
  });
}

import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError, type CaptureConfig, type KafkaConfig } from '@hogbase/config';
import { KafkaEventPublisher, type EventPublisher } from '@hogbase/queue';
import { checkReadiness, type RunningService } from '@hogbase/service-runtime';
import { buildCaptureApp } from './capture.app';
import { createFlagServices } from './flags/flag-services.util';
import { createCapturePool } from './postgres-pool.util';
import { ProjectChangeListener } from './project-changes.listener';
import { ProjectTokenCache } from './project-token.cache';
import { RemoteConfigCache } from './remote-config/remote-config.cache';
import { QueueHealth } from './queue-health.publisher';
import { SiteAppsCache } from './site-apps/site-apps.cache';

/** What capture runs on; the caller opened them and closes them after `stop()`. */
export interface CaptureEngines {
  /** Kafka (createCapturePublisher) or the in-process bus. */
  publisher: EventPublisher;
  pool: Pool;
  logger: Logger;
}

export interface CaptureService extends RunningService {
  app: FastifyInstance;
  url: string;
}

/**
 * Ready once the queue takes events and the tokens were loaded; Postgres is only reported, as known
 * projects are served from the cache and leaving rotation would drop them too.
 */
export async function startCaptureService(
  config: CaptureConfig,
  engines: CaptureEngines,
  options: { metricsText?: (own: Registry) => Promise<string> } = {},
): Promise<CaptureService> {
  const { pool, logger } = engines;
  const queue = new QueueHealth(engines.publisher);
  const tokens = new ProjectTokenCache(pool, { logger });
  // In the background: a Postgres that is down must not hold the start (readiness tries again).
  tokens.load().catch(() => undefined);
  const ready = () =>
    checkReadiness({
      required: { queue: () => queue.check(), tokens: () => tokens.readiness() },
      advisory: {
        postgres: async () => {
          await pool.query('SELECT 1');
          return true;
        },
      },
    });
  const flags = createFlagServices(pool);
  const siteApps = new SiteAppsCache(pool, { logger });
  const remoteConfig = new RemoteConfigCache(pool, siteApps, { logger });
  const changes = new ProjectChangeListener(pool.options, logger);
  changes.onChange((teamId) => {
    // Site apps first: the remote config is built from them.
    siteApps.forget(teamId);
    remoteConfig.forget(teamId);
    flags.definitions.forget(teamId);
    if (teamId === null) flags.keys.forgetAll();
    else flags.keys.forgetTeam(teamId);
    tokens.forget(teamId);
  });
  const { app, metrics } = buildCaptureApp({
    publisher: queue,
    tokens,
    flags,
    siteApps,
    remoteConfig,
    logger,
    batchBodyLimit: config.batchBodyLimit,
    eventBodyLimit: config.eventBodyLimit,
    maxDecodedBytes: config.maxDecodedBytes,
    trustProxy: config.trustProxy,
    // NOTE: the in-process bus too: it has no size limit of its own.
    maxEventBytes: config.kafka.maxMessageBytes,
    ready,
    metricsText: options.metricsText,
    metricsToken: config.metricsToken,
  });
  await app.listen({ host: config.host, port: config.port });
  changes.start();
  const { port } = app.server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    app,
    url: `http://${host}:${port}`,
    metrics: metrics.registry,
    ready,
    async stop() {
      await app.close();
      await changes.stop();
    },
  };
}

/** `acks: -1` within KAFKA_PRODUCER_TIMEOUT_MS, messages up to KAFKA_MAX_MESSAGE_BYTES. */
export function createCapturePublisher(
  kafka: KafkaConfig & { brokers: string[] },
  logger: Logger,
): KafkaEventPublisher {
  return new KafkaEventPublisher({
    brokers: kafka.brokers,
    clientId: `${kafka.clientId}-capture`,
    timeoutMs: kafka.producerTimeoutMs,
    maxMessageBytes: kafka.maxMessageBytes,
    logger,
  });
}

export interface OpenedCaptureEngines extends CaptureEngines {
  publisher: KafkaEventPublisher;
  /** After the service stopped: the publisher (in-flight publishes finish), then Postgres. */
  close(): Promise<void>;
}

/** Split mode; a broker down at start-up makes capture 503 and not ready, never exit. */
export function openCaptureEngines(config: CaptureConfig, logger: Logger): OpenedCaptureEngines {
  const { databaseUrl } = config;
  const { brokers } = config.kafka;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required when capture runs alone');
  if (!brokers) throw new ConfigError('KAFKA_BROKERS', '', 'is required when capture runs alone');
  const pool = createCapturePool(databaseUrl, logger, config.databasePoolSize);
  const publisher = createCapturePublisher({ ...config.kafka, brokers }, logger);
  publisher.connect().catch((error: unknown) => logger.warn({ err: error }, 'Kafka not reachable yet'));
  return {
    pool,
    publisher,
    logger,
    async close() {
      await publisher.close();
      await pool.end();
    },
  };
}

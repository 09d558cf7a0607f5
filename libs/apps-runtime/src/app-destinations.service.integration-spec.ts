import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { eventually, insertEnabledAppRows, insertProjectRows } from '@hogbase/test-support';
import type { AppDestinations, DestinationEvent } from './app-destinations.service';
import { createAppsRuntime, type AppsRuntime } from './apps-runtime.service';
import {
  pinTestConfig,
  startTestDestinations,
  startTestReceiver,
  testAppsRuntimeConfig,
  type TestReceiver,
} from './testing/apps-runtime-test.util';

jest.setTimeout(120_000);

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('destinations on the job engine: RetryError, calls skipped while an app backs off, pinned code', () => {
  let database: MigratedTestDatabase;
  let pool: Pool;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase(6);
    pool = database.pool;
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    // Retry jobs a test leaves behind find their configs disabled and end.
    await pool.query('UPDATE plugin_configs SET enabled = false');
  });

  afterAll(async () => {
    await database?.close();
  });

  async function receiver(): Promise<TestReceiver> {
    const started = await startTestReceiver();
    cleanups.push(() => started.close());
    return started;
  }

  /** A runtime and its destinations, started; `registry` gets the destinations' metrics. */
  async function destinationsOf(runtime: AppsRuntime, registry = new Registry()): Promise<AppDestinations> {
    cleanups.push(() => runtime.close());
    const destinations = await startTestDestinations(runtime, {
      pool,
      connectionString: database.url,
      logger,
      registry,
    });
    cleanups.push(() => destinations.stop());
    return destinations;
  }

  function event(teamId: number, properties: Record<string, unknown> = {}): DestinationEvent {
    return {
      uuid: randomUUID(),
      event: 'purchase',
      team_id: teamId,
      distinct_id: 'buyer',
      properties,
      timestamp: new Date().toISOString(),
      elements_chain: '',
      person: { uuid: randomUUID(), properties: {}, created_at: new Date().toISOString() },
    };
  }

  async function logLines(
    runtime: AppsRuntime,
    configId: number,
  ): Promise<{ type: string; message: string }[]> {
    await runtime.log.flush();
    const { rows } = await pool.query<{ type: string; message: string }>(
      'SELECT type, message FROM plugin_log_entries WHERE plugin_config_id = $1 ORDER BY timestamp',
      [configId],
    );
    return rows;
  }

  /** The config's delivery counts once they reach `succeeded` (they are written once a second). */
  async function deliveryCounts(
    runtime: AppsRuntime,
    configId: number,
    succeeded: number,
  ): Promise<{ succeeded: number; failed: number }> {
    return eventually('delivery counts', async () => {
      await runtime.log.flush();
      const { rows } = await pool.query<{ succeeded: string; failed: string }>(
        'SELECT sum(succeeded) AS succeeded, sum(failed) AS failed FROM plugin_delivery_stats WHERE plugin_config_id = $1',
        [configId],
      );
      const counts = { succeeded: Number(rows[0]?.succeeded ?? 0), failed: Number(rows[0]?.failed ?? 0) };
      return counts.succeeded >= succeeded ? counts : undefined;
    });
  }

  async function outcomes(registry: Registry): Promise<Record<string, number>> {
    const metric = await registry.getSingleMetric('app_destination_deliveries_total')?.get();
    return Object.fromEntries(
      (metric?.values ?? []).map((value) => [String(value.labels.outcome), value.value]),
    );
  }

  it('retries an onEvent that throws RetryError and delivers the event on the retry', async () => {
    const { organizationId, teamId } = await insertProjectRows(pool, 'Retried');
    const receiving = await receiver();
    const configId = await insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code: `
        const { RetryError } = require('@posthog/plugin-scaffold');
        exports.onEvent = async (event, { config, storage }) => {
          const attempt = (await storage.get('attempts', 0)) + 1;
          await storage.set('attempts', attempt);
          if (attempt === 1) throw new RetryError('the receiver is not ready');
          await fetch(config.url + '/on-event?uuid=' + event.uuid + '&attempt=' + attempt, { method: 'POST' });
        };`,
      config: { url: receiving.url },
      capabilities: { methods: ['onEvent'] },
    });
    const runtime = createAppsRuntime(pool, testAppsRuntimeConfig(), logger);
    const destinations = await destinationsOf(runtime);

    const purchase = event(teamId);
    await destinations.handOff([purchase]);

    await eventually('the retried delivery', () => (receiving.paths.length > 0 ? true : undefined), {
      timeoutMs: 60_000,
    });
    expect(receiving.paths).toEqual([`/on-event?uuid=${purchase.uuid}&attempt=2`]);
    expect(await deliveryCounts(runtime, configId, 1)).toEqual({ succeeded: 1, failed: 0 });
    expect(await logLines(runtime, configId)).toEqual([
      {
        type: 'WARN',
        message: `Delivery of event ${purchase.uuid} failed: the receiver is not ready (will retry)`,
      },
    ]);
  });

  it('retries the deliveries an app skipped while it backed off after a timeout, with no log line per event', async () => {
    const { organizationId, teamId } = await insertProjectRows(pool, 'Backing off');
    const receiving = await receiver();
    const configId = await insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      // NOTE: not an async function: a busy loop inside one is reported as the app's error
      // "interrupted", not as a timeout (apps-sandbox), and would not make the app back off.
      code: `
        exports.onEvent = (event, { config }) => {
          if (event.properties.slow) { while (true) {} }
          return fetch(config.url + '/on-event?uuid=' + event.uuid, { method: 'POST' });
        };`,
      config: { url: receiving.url },
      capabilities: { methods: ['onEvent'] },
    });
    // The retries start 5 s later: the app's 2 s of back-off is over by then.
    const runtime = createAppsRuntime(
      pool,
      testAppsRuntimeConfig({ callCpuMs: 100, timeoutBackoffMs: 2_000 }),
      logger,
    );
    const registry = new Registry();
    const destinations = await destinationsOf(runtime, registry);

    const slow = event(teamId, { slow: true });
    const skipped = [event(teamId), event(teamId), event(teamId)];
    await destinations.handOff([slow, ...skipped]);

    await eventually(
      'the skipped deliveries, retried',
      () => (receiving.paths.length >= 3 ? true : undefined),
      { timeoutMs: 60_000 },
    );
    expect([...receiving.paths].sort()).toEqual(
      skipped.map((skippedEvent) => `/on-event?uuid=${skippedEvent.uuid}`).sort(),
    );
    expect(await deliveryCounts(runtime, configId, 3)).toEqual({ succeeded: 3, failed: 1 });
    // The timeout's two lines share their millisecond: compared in any order.
    const lines = await logLines(runtime, configId);
    expect(lines).toHaveLength(3);
    expect(lines).toEqual(
      expect.arrayContaining([
        {
          type: 'WARN',
          message: expect.stringMatching(
            /^onEvent timed out \(onEvent used more than 100 ms of CPU\), 1 in a row/,
          ) as unknown,
        },
        {
          type: 'ERROR',
          message: `Delivery of event ${slow.uuid} failed: onEvent used more than 100 ms of CPU`,
        },
        { type: 'WARN', message: '3 calls skipped while the app backed off after timeouts' },
      ]),
    );
    expect(await outcomes(registry)).toEqual({ failed: 1, skipped: 3, delivered: 3 });
  });

  it("calls a pinned config by its pinned code's capabilities, not the app's current ones", async () => {
    const pinnedProject = await insertProjectRows(pool, 'Pinned to onEvent');
    const droppedProject = await insertProjectRows(pool, 'Pinned to processEvent');
    const receiving = await receiver();
    const onEvent = `exports.onEvent = async (event, { config }) => {
      await fetch(config.url + '/pinned?uuid=' + event.uuid, { method: 'POST' });
    };`;
    const processEvent = 'exports.processEvent = (event) => event;';
    // The app's current version dropped onEvent; the config still runs the copy that has it.
    const pinned = await insertEnabledAppRows(pool, {
      ...pinnedProject,
      code: processEvent,
      config: { url: receiving.url },
      capabilities: { methods: ['processEvent'] },
    });
    // The other way round: the current version added onEvent, the pinned copy has none.
    const dropped = await insertEnabledAppRows(pool, {
      ...droppedProject,
      code: onEvent,
      config: { url: receiving.url },
      capabilities: { methods: ['onEvent'] },
    });
    await pinTestConfig(pool, pinned, onEvent, ['onEvent']);
    await pinTestConfig(pool, dropped, processEvent, ['processEvent']);
    const runtime = createAppsRuntime(pool, testAppsRuntimeConfig(), logger);
    const destinations = await destinationsOf(runtime);

    const teams = await destinations.destinationTeams();
    expect([teams.has(pinnedProject.teamId), teams.has(droppedProject.teamId)]).toEqual([true, false]);
    const purchase = event(pinnedProject.teamId);
    await destinations.handOff([purchase, event(droppedProject.teamId)]);
    await eventually('the pinned delivery', () => (receiving.paths.length > 0 ? true : undefined), {
      timeoutMs: 60_000,
    });
    expect(receiving.paths).toEqual([`/pinned?uuid=${purchase.uuid}`]);
    expect(await deliveryCounts(runtime, pinned, 1)).toEqual({ succeeded: 1, failed: 0 });
  });
});

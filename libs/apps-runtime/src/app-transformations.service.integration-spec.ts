import type { Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { CapturedEvent } from '@hogbase/event-contract';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { eventually, insertEnabledAppRows, insertProjectRows } from '@hogbase/test-support';
import { AppTransformations } from './app-transformations.service';
import { createAppsRuntime, type AppsRuntime } from './apps-runtime.service';
import { pinTestConfig, testAppsRuntimeConfig, testCapturedEvent } from './testing/apps-runtime-test.util';

jest.setTimeout(60_000);

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('transformations: calls skipped while an app backs off, pinned code', () => {
  let database: MigratedTestDatabase;
  let pool: Pool;
  const runtimes: AppsRuntime[] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
  });

  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  afterAll(async () => {
    await database?.close();
  });

  function propertiesOf(event: CapturedEvent | null): unknown {
    return (JSON.parse(event?.data ?? '{}') as { properties?: unknown }).properties;
  }

  async function outcomes(registry: Registry): Promise<Record<string, number>> {
    const metric = await registry.getSingleMetric('app_transformations_total')?.get();
    return Object.fromEntries(
      (metric?.values ?? []).map((value) => [String(value.labels.outcome), value.value]),
    );
  }

  it('passes events on untouched while an app backs off: counted as skipped, one log line for them all', async () => {
    const { organizationId, teamId } = await insertProjectRows(pool, 'Backing off');
    const configId = await insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code: `exports.processEvent = (event) => {
        if (event.properties.slow) { while (true) {} }
        return { ...event, properties: { ...event.properties, seen: true } };
      };`,
      config: {},
      capabilities: { methods: ['processEvent'] },
    });
    const runtime = createAppsRuntime(
      pool,
      testAppsRuntimeConfig({ callCpuMs: 100, timeoutBackoffMs: 1_000 }),
      logger,
    );
    runtimes.push(runtime);
    const registry = new Registry();
    const transformations = new AppTransformations(pool, runtime.apps, logger, registry);

    const slow = testCapturedEvent(teamId, { slow: true });
    expect(propertiesOf(await transformations.transform(slow))).toEqual({ slow: true });
    const skipped = [testCapturedEvent(teamId, { page: 1 }), testCapturedEvent(teamId, { page: 2 })];
    for (const event of skipped) expect(await transformations.transform(event)).toBe(event);
    // Once the back-off is over the app transforms again.
    const after = await eventually('the app back from its back-off', async () => {
      const transformed = await transformations.transform(testCapturedEvent(teamId, { page: 3 }));
      return (propertiesOf(transformed) as { seen?: boolean }).seen ? transformed : undefined;
    });
    expect(propertiesOf(after)).toEqual({ page: 3, seen: true });

    const counted = await outcomes(registry);
    expect([counted.failed, counted.transformed]).toEqual([1, 1]);
    expect(counted.skipped).toBeGreaterThanOrEqual(2);
    await runtime.log.flush();
    const { rows } = await pool.query<{ type: string; message: string }>(
      'SELECT type, message FROM plugin_log_entries WHERE plugin_config_id = $1',
      [configId],
    );
    expect(rows).toHaveLength(3);
    expect(rows).toEqual(
      expect.arrayContaining([
        {
          type: 'WARN',
          message: expect.stringMatching(/^processEvent timed out .*, 1 in a row/) as unknown,
        },
        {
          type: 'ERROR',
          message: `processEvent failed for event ${slow.uuid}: processEvent used more than 100 ms of CPU`,
        },
        { type: 'WARN', message: `${counted.skipped} calls skipped while the app backed off after timeouts` },
      ]),
    );
  });

  it("picks the projects to transform by a pinned config's own code, not the app's current version", async () => {
    const pinnedProject = await insertProjectRows(pool, 'Pinned to processEvent');
    const droppedProject = await insertProjectRows(pool, 'Pinned to onEvent');
    const processEvent = `exports.processEvent = (event) => ({ ...event, properties: { ...event.properties, pinned: true } });`;
    const onEvent = 'exports.onEvent = () => {};';
    // The app's current version dropped processEvent; the config still runs the copy that has it.
    const pinned = await insertEnabledAppRows(pool, {
      ...pinnedProject,
      code: onEvent,
      config: {},
      capabilities: { methods: ['onEvent'] },
    });
    // The other way round: the current version added processEvent, the pinned copy has none.
    const dropped = await insertEnabledAppRows(pool, {
      ...droppedProject,
      code: processEvent,
      config: {},
      capabilities: { methods: ['processEvent'] },
    });
    await pinTestConfig(pool, pinned, processEvent, ['processEvent']);
    await pinTestConfig(pool, dropped, onEvent, ['onEvent']);
    const runtime = createAppsRuntime(pool, testAppsRuntimeConfig(), logger);
    runtimes.push(runtime);
    const transformations = new AppTransformations(pool, runtime.apps, logger, new Registry());

    const teams = await transformations.transformationTeams();
    expect([teams.has(pinnedProject.teamId), teams.has(droppedProject.teamId)]).toEqual([true, false]);
    const transformed = await transformations.transform(testCapturedEvent(pinnedProject.teamId, { page: 1 }));
    expect(propertiesOf(transformed)).toEqual({ page: 1, pinned: true });
  });
});

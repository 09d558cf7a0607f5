import { randomBytes, randomUUID } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, freePort, type TestDatabase } from '@hogbase/test-support';
import { waitForGroupDrained } from '../../faults/harness/group-drain';
import { LedgerSender } from '../../faults/harness/ledger-sender';
import { Container, waitUntilReady } from './container';

/**
 * The image as a platform team runs it, one container per service, against the machine's
 * PostgreSQL, the Kafka broker `npm run test:deploy` started, and chDB in a volume (no ClickHouse
 * server can be had here; chDB admits one process per data path, so management, which reads it
 * for the listing, takes its turn after ingestion).
 */
/** The default image (no chDB engine), and the one that keeps it for services that open ClickHouse. */
const IMAGE = process.env.HOGBASE_IMAGE ?? '';
const EMBEDDED_IMAGE = process.env.HOGBASE_EMBEDDED_IMAGE ?? '';
const USER_ID = 10001;
const STEADY_MS = 3_000;
const DRAIN_TIMEOUT_MS = 180_000;

function report(message: string): void {
  process.stdout.write(`[deploy] ${message}\n`);
}

describe(`the images ${IMAGE} and ${EMBEDDED_IMAGE}`, () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  const group = `deploy-${randomUUID().slice(0, 8)}`;
  const containers: Container[] = [];
  /** `withData`: the service opens ClickHouse, so it runs the chDB image on the shared volume. */
  const container = (name: string, extraEnv: Record<string, string> = {}, withData = true) => {
    const created = new Container(`hogbase-deploy-${group}-${name}`, {
      image: withData ? EMBEDDED_IMAGE : IMAGE,
      env: { ...env, ...extraEnv },
      dataDir: withData ? dataDir : undefined,
    });
    containers.push(created);
    return created;
  };

  beforeAll(async () => {
    if (!IMAGE || !EMBEDDED_IMAGE) {
      throw new Error(
        'HOGBASE_IMAGE and HOGBASE_EMBEDDED_IMAGE are not set: run through `npm run test:deploy`',
      );
    }
    if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set: run through `npm run test:deploy`');
    database = await createTestDatabase();
    // The volume of chDB and the key files: the image's user owns it, as an emptyDir would be.
    dataDir = mkdtempSync(path.join(tmpdir(), 'hogbase-deploy-data-'));
    chownSync(dataDir, USER_ID, USER_ID);
    env = {
      DATABASE_URL: database.url,
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_CONSUMER_GROUP: group,
      KAFKA_TOPIC_PARTITIONS: '4',
      ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
    };
  });

  afterAll(async () => {
    for (const each of containers) await each.destroy();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  let project: { id: number; apiKey: string; personalKey: string };

  it('migrate applies Postgres, ClickHouse and the topics once; migrate --wait then returns at once', async () => {
    const migrate = container('migrate');
    const first = JSON.parse(await migrate.once(['migrate'])) as Record<string, any>;
    expect(first.migrated).toBe(true);
    expect(first.postgres.applied.length).toBeGreaterThan(0);
    expect(first.clickhouse.applied.length).toBeGreaterThan(0);
    expect(first.kafka.topics.map((topic: { name: string }) => topic.name).sort()).toEqual(
      expect.arrayContaining(['events_plugin_ingestion']),
    );
    const second = JSON.parse(await migrate.once(['migrate'])) as Record<string, any>;
    expect({ postgres: second.postgres.applied, clickhouse: second.clickhouse.applied }).toEqual({
      postgres: [],
      clickhouse: [],
    });
    const waited = JSON.parse(await migrate.once(['migrate', '--wait', '--timeout', '60'])) as Record<
      string,
      unknown
    >;
    // At once: answered by its first check, before the 2 s poll (a loaded machine may round it to 1).
    expect(waited).toEqual({ migrated: true, waited_seconds: expect.any(Number) });
    expect(waited.waited_seconds).toBeLessThan(2);

    const bootstrap = JSON.parse(
      await container('bootstrap', {}, false).once(['admin', 'bootstrap', '--email', 'ops@deploy.test']),
    ) as { project_id: number; project_api_key: string; personal_api_key: string };
    project = {
      id: bootstrap.project_id,
      apiKey: bootstrap.project_api_key,
      personalKey: bootstrap.personal_api_key,
    };
  });

  it('capture, ingestion and management: posthog-node events are listed, and SIGTERM under load loses nothing', async () => {
    expect(project).toBeDefined();
    const ports = { capture: await freePort(), ingestion: await freePort(), management: await freePort() };
    const captureUrl = `http://127.0.0.1:${ports.capture}`;
    const ingestionUrl = `http://127.0.0.1:${ports.ingestion}`;
    const managementUrl = `http://127.0.0.1:${ports.management}`;
    // Capture needs no volume: tokens come from Postgres, events go to Kafka. Two workers: the
    // primary passes SIGTERM on and exits once both drained.
    const capture = container(
      'capture',
      { CAPTURE_PORT: String(ports.capture), CAPTURE_WORKERS: '2' },
      false,
    );
    const ingestion = container('ingestion', { INGESTION_PORT: String(ports.ingestion) });
    const management = container('management', { MANAGEMENT_PORT: String(ports.management) });

    await ingestion.start(['ingestion']);
    await capture.start(['capture']);
    await waitUntilReady(ingestion, `${ingestionUrl}/_ready`);
    await waitUntilReady(capture, `${captureUrl}/_ready`);

    // The official SDK, changed in nothing but its host.
    const { PostHog } = await import('posthog-node');
    const sdk = new PostHog(project.apiKey, { host: captureUrl, flushAt: 20, flushInterval: 0 });
    const sdkEvents = Array.from({ length: 40 }, () => randomUUID());
    sdkEvents.forEach((uuid, index) =>
      sdk.capture({ distinctId: `sdk-user-${index % 4}`, event: 'deployed', uuid, properties: { index } }),
    );
    await sdk.shutdown();

    const sender = new LedgerSender({
      captureUrl,
      apiKey: project.apiKey,
      eventsPerSecond: 500,
      persons: 50,
      label: group,
    });
    sender.start();
    await sleep(STEADY_MS);
    for (const [name, service, url] of [
      ['capture', capture, captureUrl],
      ['ingestion', ingestion, ingestionUrl],
    ] as const) {
      const stopped = await service.stop();
      report(`SIGTERM under load: ${name} exited ${stopped.exitCode} after ${stopped.seconds.toFixed(1)} s`);
      expect({ service: name, exitCode: stopped.exitCode }).toEqual({ service: name, exitCode: 0 });
      await service.start([name]);
      await waitUntilReady(service, `${url}/_ready`);
      await sleep(STEADY_MS);
    }
    const sent = await sender.stop();
    report(
      `${sent.acknowledged} events acknowledged by the capture container; ${sent.failedAttempts} failed attempts retried: ${JSON.stringify(sent.failures)}`,
    );

    await waitForGroupDrained(brokers, group, DRAIN_TIMEOUT_MS, () => 'ingestion container');
    // chDB's data path passes from ingestion to management.
    expect((await ingestion.stop()).exitCode).toBe(0);
    expect((await capture.stop()).exitCode).toBe(0);
    await management.start(['management']);
    await waitUntilReady(management, `${managementUrl}/_ready`);

    const listed = new Map<string, number>();
    let next: string | null =
      `${managementUrl}/api/projects/${project.id}/events/?limit=50000&after=2000-01-01T00:00:00Z`;
    while (next) {
      const response: Response = await fetch(next, {
        headers: { Authorization: `Bearer ${project.personalKey}` },
      });
      expect(response.status).toBe(200);
      const page = (await response.json()) as { results: { id: string }[]; next: string | null };
      for (const event of page.results) listed.set(event.id, (listed.get(event.id) ?? 0) + 1);
      next = page.next;
    }
    const expected = [...sdkEvents, ...sender.ledger];
    const missing = expected.filter((uuid) => !listed.has(uuid));
    const repeated = [...listed].filter(([, count]) => count > 1).map(([uuid]) => uuid);
    report(
      `listed ${listed.size} events through the management container for ${expected.length} acknowledged`,
    );
    expect({
      missing: missing.slice(0, 5),
      missingCount: missing.length,
      repeated: repeated.slice(0, 5),
    }).toEqual({
      missing: [],
      missingCount: 0,
      repeated: [],
    });
    expect(listed.size).toBe(expected.length);

    const stopped = await management.stop();
    expect(stopped.exitCode).toBe(0);
  });
});

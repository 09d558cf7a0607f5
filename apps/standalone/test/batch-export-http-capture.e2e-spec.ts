import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { READY_TIMEOUT_MS, startStandaloneForTest, waitForApp, type StandaloneForTest } from './app-process';
import { BatchExportsApi, captureEvents, eventsAroundRange } from './batch-export-test.util';
import { managementRequest } from './management-request';

const HOUR = 3_600_000;

/**
 * A TCP relay in front of our capture, as a load balancer in front of another PostHog would be:
 * the server refuses to export to its own ports, however its network is allowed.
 */
async function startRelay(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the listing shows of an event, and what the migration must carry over unchanged. */
interface ListedEvent {
  id: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, unknown>;
}

/**
 * PostHog's migration export end to end on `npm start`: an HTTP batch export of project A pointed
 * at our own capture's `/batch/` (through a relay) with project B's token, so that a backfill copies A's events of
 * its hours into B. The receiving side (capture, ingestion, the events table) must keep them as
 * they were, and take a second delivery of the same interval (a retried run) without doubling it.
 */
describe('npm start: an HTTP export into our own capture copies a project into another', () => {
  let standalone: StandaloneForTest;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  /** The range backfilled: two whole hours ending two hours ago. */
  const rangeEnd = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  const rangeStart = rangeEnd - 2 * HOUR;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-batch-export-http-', {
      BATCH_EXPORT_LAG_SECONDS: '0',
    });
    relay = await startRelay(standalone.captureUrl);
    // Starting npm start takes longer than Jest's 30 s on a loaded machine.
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await relay?.close();
    await standalone?.stop();
  });

  const api = (method: string, path: string, body?: unknown) =>
    managementRequest(standalone.managementUrl, standalone.credentials.personal_api_key, method, path, body);

  /** Every event of a project in the range and around it, oldest first (one page holds them). */
  async function listEvents(projectId: number): Promise<ListedEvent[]> {
    const query = new URLSearchParams({ after: '2000-01-01', orderBy: '["timestamp"]', limit: '1000' });
    const listed = await api('GET', `/api/projects/${projectId}/events/?${query.toString()}`);
    expect(listed.status).toBe(200);
    expect(listed.body.next).toBeNull();
    return (listed.body.results as ListedEvent[]).map(
      ({ id, event, distinct_id, timestamp, properties }) => ({
        id,
        event,
        distinct_id,
        timestamp,
        properties,
      }),
    );
  }

  /** Waits until the backfill is Completed and answers its runs (they must all be Completed). */
  async function completed(exportId: string, backfillId: string) {
    const exports = new BatchExportsApi(standalone.managementUrl, standalone.credentials);
    await waitForApp(
      standalone.server,
      `backfill ${backfillId} to complete`,
      () => exports.backfillCompleted(exportId, backfillId),
      120_000,
    );
    const mine = (await exports.runs(exportId)).filter((run) => run.backfill === backfillId);
    for (const run of mine) {
      expect({ status: run.status, error: run.latest_error }).toEqual({ status: 'Completed', error: null });
    }
    return mine;
  }

  it('backfills every event of the range into the second project once, and a retried run adds none', async () => {
    const { credentials } = standalone;
    const created = await api('POST', `/api/organizations/${credentials.organization_id}/projects/`, {
      name: 'Migration target',
    });
    expect(created.status).toBe(201);
    const target = created.body as { id: number; api_token: string };
    expect(target.id).not.toBe(credentials.project_id);

    const { inside, outside } = eventsAroundRange({ start: rangeStart, end: rangeEnd }, 30, (i) => ({
      distinctId: `user-${i % 4}`,
      event: i % 3 === 0 ? '$pageview' : 'order placed',
      properties: {
        i,
        amount: i * 1.5,
        nested: { ok: true, list: [1, 'two', null] },
        text: `line one\nline "two" ${i} é`,
        ...(i % 5 === 0 ? { $set: { plan: `plan-${i}` } } : {}),
      },
    }));
    await captureEvents(standalone.captureUrl, credentials.project_api_key, [...inside, ...outside]);

    // npm start answers capture once the events are stored: project A lists them all at once.
    const source = await listEvents(credentials.project_id);
    expect(source).toHaveLength(33);
    const insideIds = new Set(inside.map((event) => event.uuid));
    const expected = source.filter((event) => insideIds.has(event.id));
    expect(expected).toHaveLength(30);
    expect(await listEvents(target.id)).toEqual([]);

    const exportPath = `/api/projects/${credentials.project_id}/batch_exports/`;
    const createdExport = await api('POST', exportPath, {
      name: 'migrate to project B',
      interval: 'hour',
      destination: {
        type: 'HTTP',
        config: { url: `${relay.url}/batch/`, token: target.api_token },
      },
    });
    expect(createdExport.status).toBe(201);
    const exportId = createdExport.body.id as string;

    const exports = new BatchExportsApi(standalone.managementUrl, credentials);
    const runs = await completed(exportId, await exports.createBackfill(exportId, rangeStart, rangeEnd));
    expect(runs.map((run) => run.records_completed).sort()).toEqual([15, 15]);

    // Each event once, as project A has it. The export marks every event `$geoip_disable` (they
    // were located when first ingested), which is the one property the copy adds.
    const copied = await listEvents(target.id);
    expect(copied).toEqual(
      expected.map((event) => ({ ...event, properties: { ...event.properties, $geoip_disable: true } })),
    );

    // The same interval delivered again: the receiver keeps one row per uuid.
    const firstHour = runs.find((run) => run.data_interval_start === new Date(rangeStart).toISOString());
    expect(firstHour).toBeDefined();
    const retry = await api('POST', `${exportPath}${exportId}/runs/${firstHour!.id}/retry/`);
    expect(retry.status).toBe(200);
    const [retried] = await completed(exportId, retry.body.backfill_id as string);
    expect(retried.records_completed).toBe(15);
    expect(await listEvents(target.id)).toEqual(copied);
    const counted = await api(
      'GET',
      `/api/projects/${target.id}/events/?${new URLSearchParams({ after: '2000-01-01', select: '["count()"]' }).toString()}`,
    );
    // NOTE: the listing gives 64-bit counts as JSON strings ("30"); compared as numbers.
    expect((counted.body.results as unknown[][]).map(([count]) => Number(count))).toEqual([30]);
  }, 240_000);
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, npmTarball, startAppServer, type AppServer } from '@hogbase/test-support';
import { READY_TIMEOUT_MS, startStandaloneForTest, type StandaloneForTest } from './app-process';
import { managementApi } from './management-request';

/**
 * A destination app on `npm start`, as a user installs one: an npm-style tarball served from a
 * loopback URL (`custom` install), enabled for the project with a secret, then events captured by
 * posthog-node reach its webhook receiver. The receiver refuses the first deliveries (503): they
 * are retried with back-off and land, and the config's logs and delivery rate tell the story.
 */

const APP_FILES = {
  'package.json': JSON.stringify({ name: 'order-webhook', version: '1.0.0' }),
  'plugin.json': JSON.stringify({
    name: 'Order webhook',
    description: 'Posts orders to a webhook',
    config: [
      { key: 'url', name: 'Webhook URL', type: 'string', required: true },
      { key: 'token', name: 'Token', type: 'string', secret: true, required: true },
    ],
  }),
  'index.ts': `
import type { Meta } from './meta';
interface PostHogEvent { uuid: string; event: string; distinct_id: string; properties: Record<string, unknown>; person?: { properties: Record<string, unknown> } }
export function composeWebhook(event: PostHogEvent, { config }: Meta) {
  if (event.event !== 'order placed') return null;
  return {
    url: config.url,
    body: JSON.stringify({ uuid: event.uuid, distinct_id: event.distinct_id, amount: event.properties.amount, plan: event.person?.properties.plan }),
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + config.token },
    method: 'POST',
  };
}`,
  'meta.ts': 'export interface Meta { config: { url: string; token: string } }',
};

interface Delivery {
  status: number;
  authorization: string | undefined;
  body: { uuid: string; distinct_id: string; amount: number; plan?: string };
}

/** The customer's webhook: refuses the first `failures` requests with 503, then accepts. */
async function startReceiver(
  failures: number,
): Promise<{ server: Server; url: string; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  let left = failures;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = left > 0 ? 503 : 200;
      left -= 1;
      deliveries.push({
        status,
        authorization: request.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString()) as Delivery['body'],
      });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries };
}

describe('npm start: a destination app installed from an archive URL delivers posthog-node events', () => {
  let standalone: StandaloneForTest | undefined;
  let archives: AppServer | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-destination-app-test-', { LOG_LEVEL: 'warn' });
    archives = await startAppServer();
    const tarball = await npmTarball(APP_FILES);
    archives.routes.set('/order-webhook-1.0.0.tgz', () => [200, tarball, 'application/gzip']);
    receiver = await startReceiver(2);
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await archives?.close();
    await new Promise((resolve) => (receiver ? receiver.server.close(resolve) : resolve(undefined)));
    await standalone?.stop().catch(() => undefined);
  });

  it('retries the deliveries its receiver refused, and shows them in the config logs and delivery rate', async () => {
    const { managementUrl, captureUrl, credentials } = standalone!;
    const api = managementApi(managementUrl, credentials.personal_api_key);

    const app = await api(
      'POST',
      `/api/organizations/${credentials.organization_id}/pipeline_destinations/`,
      {
        plugin_type: 'custom',
        url: `${archives!.url}/order-webhook-1.0.0.tgz`,
      },
    );
    expect(app).toMatchObject({ name: 'Order webhook', capabilities: { methods: ['composeWebhook'] } });
    const config = await api('POST', `/api/projects/${credentials.project_id}/plugin_configs/`, {
      plugin: app.id,
      enabled: true,
      order: 1,
      config: { url: receiver!.url, token: 'webhook-secret' },
    });
    expect(config.config.token).toBe('**************** POSTHOG SECRET FIELD ****************');
    // Ingestion looks up which projects have destinations every 5 s.
    await sleep(6_000);

    const { PostHog } = await import('posthog-node');
    const client = new PostHog(credentials.project_api_key, {
      host: captureUrl,
      flushAt: 1,
      fetchRetryCount: 0,
    });
    client.identify({ distinctId: 'buyer', properties: { plan: 'pro' } });
    for (const amount of [10, 20, 30]) {
      client.capture({ distinctId: 'buyer', event: 'order placed', properties: { amount } });
    }
    client.capture({ distinctId: 'buyer', event: 'page viewed' });
    await client.shutdown();

    // The two refused deliveries come again after 5 s (pg-boss back-off) and land.
    const delivered = () => receiver!.deliveries.filter((delivery) => delivery.status === 200);
    await eventually('three deliveries', () => delivered().length >= 3, {
      timeoutMs: 90_000,
      intervalMs: 250,
    });
    expect(
      delivered()
        .map((delivery) => delivery.body.amount)
        .sort(),
    ).toEqual([10, 20, 30]);
    expect(new Set(delivered().map((delivery) => delivery.body.uuid)).size).toBe(3);
    expect(receiver!.deliveries.filter((delivery) => delivery.status === 503)).toHaveLength(2);
    for (const delivery of receiver!.deliveries) {
      expect(delivery.authorization).toBe('Bearer webhook-secret');
      expect(delivery.body).toMatchObject({ distinct_id: 'buyer', plan: 'pro' });
    }

    const configPath = `/api/projects/${credentials.project_id}/plugin_configs/${config.id}/`;
    const { logs, retrieved } = await eventually(
      'the delivery rate and the log lines',
      async () => {
        const logs = await api<{ results: { type: string; message: string }[] }>('GET', `${configPath}logs/`);
        const retrieved = await api('GET', configPath);
        return retrieved.delivery_rate_24h === 1 && logs.results.length >= 2
          ? { logs, retrieved }
          : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(retrieved.delivery_rate_24h).toBe(1);
    expect(logs.results.filter((line) => line.type === 'WARN').map((line) => line.message)).toEqual([
      expect.stringMatching(/failed: the receiver answered 503 \(will retry\)$/),
      expect.stringMatching(/failed: the receiver answered 503 \(will retry\)$/),
    ]);
  }, 180_000);
});

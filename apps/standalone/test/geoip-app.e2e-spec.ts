import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { startAppServer, type AppServer } from '@hogbase/test-support';
import { READY_TIMEOUT_MS, REPO_ROOT, startStandaloneForTest, type StandaloneForTest } from './app-process';
import { managementApi } from './management-request';

/**
 * A published PostHog app installed unchanged: `@posthog/geoip-plugin@0.0.7` as `npm pack` made
 * it (a processEvent transformation written in TypeScript, importing the scaffold), served from a
 * loopback URL as a `custom` install. The GeoIP database it reads through `meta.geoip` is the test
 * database its own package ships (GEOIP_DATABASE_PATH). Events captured by posthog-node with an IP
 * come out of ingestion with the location properties the app adds, and so does their person.
 */

const TARBALL = path.join(REPO_ROOT, 'libs/apps-install/test/fixtures/posthog-geoip-plugin-0.0.7.tgz');

/** One file of a gzip'd tarball. */
async function fileOfTarball(tarball: Buffer, name: string): Promise<Buffer> {
  const unpacker = extract();
  let found: Buffer | undefined;
  const done = new Promise<void>((resolve, reject) => {
    unpacker.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        if (header.name === name) found = Buffer.concat(chunks);
        next();
      });
      stream.resume();
    });
    unpacker.on('finish', resolve);
    unpacker.on('error', reject);
  });
  unpacker.end(gunzipSync(tarball));
  await done;
  if (!found) throw new Error(`${name} is not in the tarball`);
  return found;
}

describe('npm start: the published GeoIP app, installed unchanged, transforms events', () => {
  let standalone: StandaloneForTest | undefined;
  let archives: AppServer | undefined;
  let databaseDir: string | undefined;

  beforeAll(async () => {
    const tarball = await readFile(TARBALL);
    databaseDir = await mkdtemp(path.join(tmpdir(), 'hogbase-geoip-db-'));
    const database = path.join(databaseDir, 'GeoLite2-City-Test.mmdb');
    await writeFile(database, await fileOfTarball(tarball, 'package/GeoLite2-City-Test.mmdb'));
    standalone = await startStandaloneForTest('hogbase-geoip-app-test-', {
      LOG_LEVEL: 'warn',
      GEOIP_DATABASE_PATH: database,
    });
    archives = await startAppServer();
    archives.routes.set('/geoip-plugin-0.0.7.tgz', () => [200, tarball, 'application/gzip']);
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await archives?.close();
    await standalone?.stop().catch(() => undefined);
    if (databaseDir) await rm(databaseDir, { recursive: true, force: true });
  });

  it('adds the location of the event IP to the event and its person', async () => {
    const { managementUrl, captureUrl, credentials } = standalone!;
    const api = managementApi(managementUrl, credentials.personal_api_key);
    const app = await api(
      'POST',
      `/api/organizations/${credentials.organization_id}/pipeline_destinations/`,
      {
        plugin_type: 'custom',
        url: `${archives!.url}/geoip-plugin-0.0.7.tgz`,
      },
    );
    expect(app).toMatchObject({ name: 'GeoIP', capabilities: { methods: ['processEvent'] } });
    await api('POST', `/api/projects/${credentials.project_id}/plugin_configs/`, {
      plugin: app.id,
      enabled: true,
    });
    // Ingestion looks up which projects have transformations every 5 s.
    await sleep(6_000);

    const { PostHog } = await import('posthog-node');
    // posthog-node sends $geoip_disable unless told otherwise, and the app honours it.
    const client = new PostHog(credentials.project_api_key, {
      host: captureUrl,
      flushAt: 1,
      fetchRetryCount: 0,
      disableGeoip: false,
    });
    client.capture({ distinctId: 'londoner', event: 'page viewed', properties: { $ip: '81.2.69.142' } });
    client.capture({ distinctId: 'nowhere', event: 'page viewed', properties: { $ip: '10.0.0.1' } });
    await client.shutdown();

    const listed = async (distinctId: string) => {
      const query = new URLSearchParams({ distinct_id: distinctId }).toString();
      const body = await api('GET', `/api/projects/${credentials.project_id}/events/?${query}`);
      return body.results as {
        properties: Record<string, unknown>;
        person: { properties: Record<string, unknown> };
      }[];
    };
    const [londoner] = await listed('londoner');
    expect(londoner.properties).toMatchObject({
      $ip: '81.2.69.142',
      $geoip_city_name: 'London',
      $geoip_country_name: 'United Kingdom',
      $geoip_country_code: 'GB',
      $geoip_continent_code: 'EU',
      $geoip_time_zone: 'Europe/London',
    });
    expect(londoner.person.properties).toMatchObject({
      $geoip_city_name: 'London',
      $initial_geoip_country_code: 'GB',
    });
    // An address the database does not know passes through untouched.
    const [nowhere] = await listed('nowhere');
    expect(nowhere.properties.$ip).toBe('10.0.0.1');
    expect(nowhere.properties).not.toHaveProperty('$geoip_city_name');
  }, 120_000);
});

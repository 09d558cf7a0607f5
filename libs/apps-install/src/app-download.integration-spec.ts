import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { EgressPolicy } from '@hogbase/egress';
import { tarGz } from '@hogbase/test-support';
import { FakeHttpServer, json, zip } from './testing/app-archives.util';
import { downloadApp as downloadFrom } from './app-download.util';
import { AppInstallError } from './app-install.error';
import type { AppSourceOptions } from './app-install.types';
import { UNSUPPORTED_URL_MESSAGE } from './app-url.util';
import { readPluginJson } from './plugin-json.validator';

const PLUGIN_JSON = JSON.stringify({ name: 'Hello', config: [{ key: 'greeting', type: 'string' }] });
const INDEX_TS = 'export function processEvent(event: any) { return event }';
const SHA = 'a'.repeat(40);
const REFUSED = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';

/** The fake servers listen on loopback: these tests allow it, as an admin would for a local mirror. */
const LOOPBACK_ALLOWED = new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] });
const downloadApp = (url: string, options: AppSourceOptions = {}) =>
  downloadFrom(url, { egress: LOOPBACK_ALLOWED, ...options });

describe('downloadApp', () => {
  const server = new FakeHttpServer();
  let baseUrl: string;
  let workDir: string;

  beforeAll(async () => {
    baseUrl = await server.start();
    workDir = await mkdtemp(join(tmpdir(), 'apps-install-'));
  });
  afterAll(async () => {
    await server.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('unpacks an npm-style tarball from a custom URL, stripping package/ and the query string', async () => {
    server.routes.set('/hello.tgz?private_token=secret', {
      body: await tarGz({
        'package/plugin.json': PLUGIN_JSON,
        'package/index.ts': INDEX_TS,
        'package/package.json': JSON.stringify({ name: 'hello', version: '1.2.3' }),
        'package/logo.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]),
        'package/node_modules/left-pad/index.js': 'module.exports = 1',
      }),
    });

    const app = await downloadApp(`${baseUrl}/hello.tgz?private_token=secret`);

    expect(Object.keys(app.files).sort()).toEqual(['index.ts', 'logo.png', 'package.json', 'plugin.json']);
    expect(app.files['index.ts']).toBe(INDEX_TS);
    expect(app.files['logo.png']).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]));
    expect(app.urlWithoutSecrets).toBe(`${baseUrl}/hello.tgz`);
    expect(app.tag).toBe('1.2.3');
    expect(readPluginJson(app.files).name).toBe('Hello');
  });

  it('downloads a GitHub repository as its codeload zip, strips the top folder and tags it with the commit', async () => {
    server.routes.set('/PostHog/hello-plugin/zip/HEAD', {
      body: zip(
        { [`hello-plugin-${SHA}/plugin.json`]: PLUGIN_JSON, [`hello-plugin-${SHA}/index.ts`]: INDEX_TS },
        SHA,
      ),
    });

    const app = await downloadApp('https://github.com/PostHog/hello-plugin', { githubCodeloadUrl: baseUrl });

    expect(Object.keys(app.files).sort()).toEqual(['index.ts', 'plugin.json']);
    expect(app.tag).toBe(SHA);
    expect(app.urlWithoutSecrets).toBe('https://github.com/PostHog/hello-plugin');
  });

  it('downloads a folder of a GitHub repository at a ref and sends the private token as a header', async () => {
    server.routes.set('/PostHog/apps/zip/v2', {
      body: zip({
        'apps-v2/README.md': '# monorepo',
        'apps-v2/packages/hello/plugin.json': PLUGIN_JSON,
        'apps-v2/packages/hello/index.ts': INDEX_TS,
      }),
    });
    server.requests.length = 0;

    const app = await downloadApp(
      'https://github.com/PostHog/apps/tree/v2/packages/hello?private_token=tok',
      {
        githubCodeloadUrl: baseUrl,
      },
    );

    expect(Object.keys(app.files).sort()).toEqual(['index.ts', 'plugin.json']);
    expect(app.tag).toBe('v2');
    expect(server.requests[0]?.headers.authorization).toBe('token tok');
  });

  it('downloads a GitLab project archive at a ref', async () => {
    server.routes.set('/group/hello/-/archive/main/hello-main.zip', {
      body: zip({ 'hello-main-0123/plugin.json': PLUGIN_JSON, 'hello-main-0123/index.ts': INDEX_TS }),
    });

    const app = await downloadApp('https://gitlab.com/group/hello/-/tree/main', { gitlabUrl: baseUrl });

    expect(Object.keys(app.files).sort()).toEqual(['index.ts', 'plugin.json']);
    expect(app.tag).toBe('main');
  });

  it('resolves an npm package page through the registry to its tarball', async () => {
    server.routes.set(
      '/@acme/hello-plugin/latest',
      json({ version: '2.0.0', dist: { tarball: `${baseUrl}/t/hello-2.0.0.tgz` } }),
    );
    server.routes.set(
      '/@acme/hello-plugin/1.0.0',
      json({ version: '1.0.0', dist: { tarball: `${baseUrl}/t/hello-1.0.0.tgz` } }),
    );
    for (const version of ['1.0.0', '2.0.0']) {
      server.routes.set(`/t/hello-${version}.tgz`, {
        body: await tarGz({
          'package/plugin.json': PLUGIN_JSON,
          'package/index.ts': INDEX_TS,
          'package/package.json': JSON.stringify({ version }),
        }),
      });
    }

    const latest = await downloadApp('https://www.npmjs.com/package/@acme/hello-plugin', {
      npmRegistryUrl: baseUrl,
    });
    const pinned = await downloadApp('https://www.npmjs.com/package/@acme/hello-plugin/v/1.0.0', {
      npmRegistryUrl: baseUrl,
    });

    expect(latest.tag).toBe('2.0.0');
    expect(pinned.tag).toBe('1.0.0');
  });

  it('installs the published geoip app from a registry tarball URL', async () => {
    const tarball = await readFile(join(__dirname, '../test/fixtures/posthog-geoip-plugin-0.0.7.tgz'));
    server.routes.set('/@posthog/geoip-plugin/-/geoip-plugin-0.0.7.tgz', { body: tarball });

    const app = await downloadApp(`${baseUrl}/@posthog/geoip-plugin/-/geoip-plugin-0.0.7.tgz`, {
      npmRegistryUrl: baseUrl,
    });

    expect(app.tag).toBe('0.0.7');
    expect(typeof app.files['index.ts']).toBe('string');
    expect(app.files['GeoLite2-City-Test.mmdb']).toBeInstanceOf(Uint8Array);
    expect(readPluginJson(app.files)).toMatchObject({ name: 'GeoIP', isStateless: true, main: 'index.ts' });
  });

  it('refuses an archive entry that climbs out of its folder', async () => {
    server.routes.set('/evil.tgz', {
      body: await tarGz({ 'package/plugin.json': PLUGIN_JSON, 'package/../../etc/cron.d/x': 'boom' }),
    });
    server.routes.set('/evil.zip', { body: zip({ 'repo/plugin.json': PLUGIN_JSON, '/etc/passwd': 'root' }) });

    await expect(downloadApp(`${baseUrl}/evil.tgz`)).rejects.toThrow(
      /entry outside its folder: "package\/..\/..\/etc/,
    );
    await expect(downloadApp(`${baseUrl}/evil.zip`)).rejects.toThrow(
      /entry outside its folder: "\/etc\/passwd"/,
    );
  });

  it('refuses an archive over the compressed bound and a gzip bomb over the unpacked bound', async () => {
    server.routes.set('/big.tgz', { body: Buffer.alloc(64 * 1024, 1) });
    const bomb = await tarGz({
      'package/plugin.json': PLUGIN_JSON,
      'package/zeros.txt': 'a'.repeat(4 * 1024 * 1024),
    });
    server.routes.set('/bomb.tgz', { body: bomb });

    await expect(downloadApp(`${baseUrl}/big.tgz`, { maxArchiveBytes: 32 * 1024 })).rejects.toThrow(
      `Could not download the app from ${baseUrl}/big.tgz: it is larger than 32768 bytes`,
    );
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expect(downloadApp(`${baseUrl}/bomb.tgz`, { maxUnpackedBytes: 1024 * 1024 })).rejects.toThrow(
      'The app is larger than 1048576 bytes once unpacked',
    );
  });

  it('refuses a URL that answers something other than an archive', async () => {
    server.routes.set('/page.html', { body: '<html>hello</html>' });
    server.routes.set('/broken.tgz', { body: Buffer.concat([gzipSync('x'.repeat(600)).subarray(0, 20)]) });

    await expect(downloadApp(`${baseUrl}/page.html`)).rejects.toThrow(
      'The URL did not answer with an archive (a zip or a gzipped tar file)',
    );
    await expect(downloadApp(`${baseUrl}/broken.tgz`)).rejects.toThrow(AppInstallError);
  });

  it('maps HTTP and network failures to AppInstallError without the query string', async () => {
    await expect(downloadApp(`${baseUrl}/missing.tgz?private_token=secret`)).rejects.toThrow(
      `Could not download the app from ${baseUrl}/missing.tgz: HTTP 404`,
    );
    const unreachable = new FakeHttpServer();
    const deadUrl = await unreachable.start();
    await unreachable.stop();
    const failure = downloadApp(`${deadUrl}/x.tgz?private_token=secret`);
    await expect(failure).rejects.toThrow(/ECONNREFUSED/);
    await expect(failure).rejects.not.toThrow(/secret/);
  });

  it('follows redirects and gives up on a server that does not answer in time', async () => {
    server.routes.set('/releases/latest.tgz', {
      status: 302,
      body: '',
      headers: { location: '/releases/v3.tgz' },
    });
    server.routes.set('/releases/v3.tgz', {
      body: await tarGz({ 'package/plugin.json': PLUGIN_JSON, 'package/index.ts': INDEX_TS }),
    });
    server.hangingPaths.add('/slow.tgz');

    const redirected = await downloadApp(`${baseUrl}/releases/latest.tgz`);
    expect(redirected.files['index.ts']).toBe(INDEX_TS);
    await expect(downloadApp(`${baseUrl}/slow.tgz`, { timeoutMs: 200 })).rejects.toThrow(
      `Could not download the app from ${baseUrl}/slow.tgz: no complete answer within 200 ms`,
    );
  });

  it('refuses an app URL on loopback unless an admin allowed it, the same for an open and a closed port', async () => {
    server.routes.set('/internal.tgz', {
      body: await tarGz({ 'package/plugin.json': PLUGIN_JSON, 'package/index.ts': INDEX_TS }),
    });
    const requestsBefore = server.requests.length;
    const port = new URL(baseUrl).port;
    const closed = new FakeHttpServer();
    const closedUrl = await closed.start();
    await closed.stop();
    for (const url of [
      `${baseUrl}/internal.tgz`,
      `http://2130706433:${port}/internal.tgz`,
      `${closedUrl}/x.tgz`,
    ]) {
      await expect(downloadFrom(url)).rejects.toThrow(
        new AppInstallError(`Could not download the app from ${url}: 127.0.0.1 ${REFUSED}`),
      );
    }
    await expect(downloadFrom(`http://localhost:${port}/internal.tgz`)).rejects.toThrow(
      `localhost ${REFUSED}`,
    );
    expect(server.requests.length).toBe(requestsBefore);
    await expect(downloadApp(`${baseUrl}/internal.tgz`)).resolves.toMatchObject({ tag: null });
  });

  it('refuses a redirect from an allowed server to loopback before anything reaches it', async () => {
    // 127.0.0.2 stands for a public server the policy allows; 127.0.0.1 for the server's network.
    const redirector = new FakeHttpServer();
    const redirectorUrl = await redirector.start('127.0.0.2');
    redirector.routes.set('/app.tgz', {
      status: 302,
      body: '',
      headers: { location: `${baseUrl}/hello.tgz` },
    });
    const requestsBefore = server.requests.length;
    try {
      await expect(
        downloadFrom(`${redirectorUrl}/app.tgz`, {
          egress: new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.2/32'] }),
        }),
      ).rejects.toThrow(`Could not download the app from ${redirectorUrl}/app.tgz: 127.0.0.1 ${REFUSED}`);
      expect(redirector.requests).toHaveLength(1);
      expect(server.requests.length).toBe(requestsBefore);
    } finally {
      await redirector.stop();
    }
  });

  it('refuses URLs PostHog does not accept', async () => {
    for (const url of [
      'ftp://example.com/app.zip',
      'https://github.com/PostHog',
      'https://www.npmjs.com/search?q=x',
      'nonsense',
    ]) {
      await expect(downloadApp(url)).rejects.toThrow(UNSUPPORTED_URL_MESSAGE);
    }
  });

  describe('file: URLs', () => {
    let appsDirectory: string;
    let outside: string;

    beforeAll(async () => {
      appsDirectory = join(workDir, 'apps');
      outside = join(workDir, 'outside');
      await mkdir(join(appsDirectory, 'hello', 'lib'), { recursive: true });
      await mkdir(join(appsDirectory, 'hello', 'node_modules', 'dep'), { recursive: true });
      await mkdir(outside, { recursive: true });
      await writeFile(join(appsDirectory, 'hello', 'plugin.json'), JSON.stringify({ config: [] }));
      await writeFile(join(appsDirectory, 'hello', 'index.ts'), INDEX_TS);
      await writeFile(join(appsDirectory, 'hello', 'lib', 'util.ts'), 'export const x = 1');
      await writeFile(join(appsDirectory, 'hello', 'node_modules', 'dep', 'index.js'), '');
      await writeFile(join(outside, 'plugin.json'), PLUGIN_JSON);
      await writeFile(join(outside, 'secret.txt'), 'do not read');
    });

    it('reads a folder inside the local apps directory, named after the folder', async () => {
      const app = await downloadApp(`file:${join(appsDirectory, 'hello')}`, {
        localAppsDirectory: appsDirectory,
      });

      expect(Object.keys(app.files).sort()).toEqual(['index.ts', 'lib/util.ts', 'plugin.json']);
      expect(app.defaultName).toBe('hello');
      expect(readPluginJson(app.files, { defaultName: app.defaultName }).name).toBe('hello');
      const relative = await downloadApp('file:hello', { localAppsDirectory: appsDirectory });
      expect(relative.files['index.ts']).toBe(INDEX_TS);
    });

    it('refuses a folder outside the local apps directory, or any folder when none is set', async () => {
      await expect(downloadApp(`file:${outside}`, { localAppsDirectory: appsDirectory })).rejects.toThrow(
        'file: apps must be inside the local apps directory',
      );
      await expect(
        downloadApp(`file:${appsDirectory}/../outside`, { localAppsDirectory: appsDirectory }),
      ).rejects.toThrow('file: apps must be inside the local apps directory');
      await expect(downloadApp(`file:${join(appsDirectory, 'hello')}`)).rejects.toThrow(
        'Installing apps from the local file system is disabled: no local apps directory is set',
      );
    });

    it('refuses a symlink that leaves the local apps directory', async () => {
      await mkdir(join(appsDirectory, 'linked'), { recursive: true });
      await writeFile(join(appsDirectory, 'linked', 'plugin.json'), PLUGIN_JSON);
      await symlink(join(outside, 'secret.txt'), join(appsDirectory, 'linked', 'secret.txt'));
      await symlink(outside, join(appsDirectory, 'escape'));

      await expect(downloadApp('file:linked', { localAppsDirectory: appsDirectory })).rejects.toThrow(
        'secret.txt links outside the local apps directory',
      );
      await expect(downloadApp('file:escape', { localAppsDirectory: appsDirectory })).rejects.toThrow(
        'file: apps must be inside the local apps directory',
      );
    });
  });
});

import { EgressPolicy } from '@hogbase/egress';
import { FakeHttpServer, json } from './testing/app-archives.util';
import { AppInstallError } from './app-install.error';
import type { AppSourceOptions } from './app-install.types';
import { latestVersion as latestVersionOf } from './app-version.util';

/** The fake registry listens on loopback: allowed here, as an admin would for a local mirror. */
const LOOPBACK_ALLOWED = new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] });
const latestVersion = (url: string, options: AppSourceOptions = {}) =>
  latestVersionOf(url, { egress: LOOPBACK_ALLOWED, ...options });

describe('latestVersion', () => {
  const server = new FakeHttpServer();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await server.start();
  });
  afterAll(() => server.stop());

  it('follows the npm registry as its latest version changes, for page and tarball URLs', async () => {
    let latest = '1.0.0';
    server.routes.set('/@acme/hello-plugin/latest', () =>
      json({ name: '@acme/hello-plugin', version: latest }),
    );
    const options = { npmRegistryUrl: baseUrl };

    await expect(latestVersion('https://www.npmjs.com/package/@acme/hello-plugin', options)).resolves.toBe(
      '1.0.0',
    );
    latest = '1.1.0';
    await expect(
      latestVersion('https://www.npmjs.com/package/@acme/hello-plugin/v/1.0.0', options),
    ).resolves.toBe('1.1.0');
    await expect(
      latestVersion(`${baseUrl}/@acme/hello-plugin/-/hello-plugin-1.0.0.tgz`, options),
    ).resolves.toBe('1.1.0');
  });

  it('asks GitHub and GitLab for the commit their ref points at', async () => {
    server.routes.set('/repos/PostHog/hello-plugin/commits/HEAD', json({ sha: 'b'.repeat(40) }));
    server.routes.set('/repos/PostHog/hello-plugin/commits/v2', json({ sha: 'c'.repeat(40) }));
    server.routes.set('/api/v4/projects/group%2Fhello/repository/commits/main', json({ id: 'd'.repeat(40) }));

    await expect(
      latestVersion('https://github.com/PostHog/hello-plugin', { githubApiUrl: baseUrl }),
    ).resolves.toBe('b'.repeat(40));
    await expect(
      latestVersion('https://github.com/PostHog/hello-plugin/tree/v2', { githubApiUrl: baseUrl }),
    ).resolves.toBe('c'.repeat(40));
    await expect(
      latestVersion('https://gitlab.com/group/hello/-/tree/main', { gitlabUrl: baseUrl }),
    ).resolves.toBe('d'.repeat(40));
  });

  it('has no version for plain archive URLs and local folders', async () => {
    await expect(latestVersion(`${baseUrl}/some/app.zip`)).resolves.toBeNull();
    await expect(latestVersion('file:hello')).resolves.toBeNull();
  });

  it('maps a failing source to AppInstallError', async () => {
    server.routes.set('/broken-plugin/latest', { status: 500, body: 'oops' });
    server.routes.set('/odd-plugin/latest', json({ name: 'odd-plugin' }));

    await expect(
      latestVersion('https://www.npmjs.com/package/broken-plugin', { npmRegistryUrl: baseUrl }),
    ).rejects.toThrow(
      new AppInstallError(
        `Could not download the latest version of broken-plugin from ${baseUrl}/broken-plugin/latest: HTTP 500`,
      ),
    );
    await expect(
      latestVersion('https://www.npmjs.com/package/odd-plugin', { npmRegistryUrl: baseUrl }),
    ).rejects.toThrow('The answer for the latest version of odd-plugin has no "version"');
  });
});

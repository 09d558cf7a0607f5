import { loadManagementConfig } from './management.config';

describe('loadManagementConfig', () => {
  it('serves npm start on one machine by default', () => {
    const config = loadManagementConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8000, smtp: undefined, dnsServers: [] });
    expect(config.database.url).toBeUndefined();
    expect(config.apps).toEqual({
      localDirectory: undefined,
      npmRegistryUrl: 'https://registry.npmjs.org',
      repositoryUrl: undefined,
    });
  });

  it('reads where pipeline apps come from', () => {
    const config = loadManagementConfig({
      APPS_LOCAL_DIRECTORY: '/srv/apps/',
      APPS_NPM_REGISTRY_URL: 'http://127.0.0.1:4873/',
      APPS_REPOSITORY_URL: 'https://apps.example.com/plugins.json',
    });
    expect(config.apps).toEqual({
      localDirectory: '/srv/apps',
      npmRegistryUrl: 'http://127.0.0.1:4873',
      repositoryUrl: 'https://apps.example.com/plugins.json',
    });
  });

  it('reads every setting from the environment', () => {
    const config = loadManagementConfig({
      MANAGEMENT_PORT: '9000',
      DATABASE_URL: 'postgres://user:secret@db:5432/app',
      SMTP_URL: 'smtp://mail:25',
      DNS_SERVERS: '127.0.0.1:5353, [::1]:53',
      LOG_LEVEL: 'warn',
    });
    expect(config.port).toBe(9000);
    expect(config.database.url).toBe('postgres://user:secret@db:5432/app');
    expect(config.smtp?.url).toBe('smtp://mail:25');
    expect(config.dnsServers).toEqual(['127.0.0.1:5353', '[::1]:53']);
    expect(config.logLevel).toBe('warn');
  });

  it.each([
    [{ MANAGEMENT_PORT: '70000' }, /^MANAGEMENT_PORT=70000: /],
    [{ DATABASE_URL: 'mysql://user:secret@db/app' }, /^DATABASE_URL=mysql:\/\/user:\*\*\*@db\/app: /],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL=loud: must be one of/],
    [{ DNS_SERVERS: 'dns.example.com' }, /^DNS_SERVERS=dns.example.com: /],
    [{ APPS_LOCAL_DIRECTORY: 'apps' }, /^APPS_LOCAL_DIRECTORY=apps: must be an absolute path/],
    [
      { APPS_NPM_REGISTRY_URL: 'ftp://registry' },
      /^APPS_NPM_REGISTRY_URL=ftp:\/\/registry\/?: must use one of the protocols http, https/,
    ],
  ])('stops on %j with NAME=value: why, never printing a password', (env, message) => {
    expect(() => loadManagementConfig(env)).toThrow(message);
  });
});

import { loadManagementConfig } from './management.config';

describe('loadManagementConfig', () => {
  it('serves npm start on one machine by default', () => {
    const config = loadManagementConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8000, smtp: undefined, dnsServers: [] });
    expect(config.database.url).toBeUndefined();
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
  ])('stops on %j with NAME=value: why, never printing a password', (env, message) => {
    expect(() => loadManagementConfig(env)).toThrow(message);
  });
});

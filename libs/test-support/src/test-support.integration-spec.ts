import { Resolver } from 'node:dns/promises';

import { createTransport } from 'nodemailer';
import { Client } from 'pg';

import {
  assertTestDatabaseName,
  createTestDatabase,
  startDnsTestServer,
  startSmtpTestServer,
  type DnsTestServer,
  type SmtpTestServer,
} from './index';

async function queryServer<T>(connectionString: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

describe('createTestDatabase', () => {
  it('creates a database that accepts queries and is gone after drop()', async () => {
    const database = await createTestDatabase();
    let dropped = false;
    try {
      expect(database.name).toMatch(/^hogbase_test_w\d+_\d+_\d+$/);
      expect(new URL(database.url).pathname).toBe(`/${database.name}`);

      const rows = await queryServer(database.url, async (client) => {
        const result = await client.query<{ answer: number; database: string }>(
          'SELECT 1 AS answer, current_database() AS database',
        );
        return result.rows;
      });
      expect(rows).toEqual([{ answer: 1, database: database.name }]);

      await database.drop();
      dropped = true;

      const remaining = await queryServer(process.env.TEST_DATABASE_URL ?? '', async (client) => {
        const result = await client.query('SELECT datname FROM pg_database WHERE datname = $1', [
          database.name,
        ]);
        return result.rowCount;
      });
      expect(remaining).toBe(0);
    } finally {
      if (!dropped) await database.drop();
    }
  });

  it('drops a database even while a client is still connected to it', async () => {
    const database = await createTestDatabase();
    const lingeringClient = new Client({ connectionString: database.url });
    lingeringClient.on('error', () => undefined);
    await lingeringClient.connect();

    await database.drop();

    await expect(lingeringClient.query('SELECT 1')).rejects.toThrow();
    await lingeringClient.end().catch(() => undefined);
  });

  it('gives each call its own database', async () => {
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    try {
      expect(second.name).not.toBe(first.name);
    } finally {
      await Promise.all([first.drop(), second.drop()]);
    }
  });

  it('refuses database names that do not contain "test"', () => {
    expect(() => assertTestDatabaseName('hogbase')).toThrow(/does not contain "test"/);
    expect(() => assertTestDatabaseName('hogbase_test_w1')).not.toThrow();
  });
});

describe('startSmtpTestServer', () => {
  let smtpServer: SmtpTestServer;

  beforeEach(async () => {
    smtpServer = await startSmtpTestServer();
  });

  afterEach(async () => {
    await smtpServer.stop();
  });

  it('receives a mail sent by nodemailer with its subject, text and envelope recipients', async () => {
    expect(smtpServer.url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    const transport = createTransport(smtpServer.url);

    await transport.sendMail({
      from: '"Hogbase" <noreply@hogbase.test>',
      to: 'alice@example.test',
      bcc: 'audit@example.test',
      subject: 'You have been invited',
      text: 'Join the organization: https://hogbase.test/signup/abc',
      html: '<p>Join the organization</p>',
    });

    const mail = await smtpServer.waitForMessage((received) => received.to.includes('alice@example.test'));
    expect(mail).toEqual({
      from: 'noreply@hogbase.test',
      to: ['alice@example.test', 'audit@example.test'],
      subject: 'You have been invited',
      text: 'Join the organization: https://hogbase.test/signup/abc',
      html: '<p>Join the organization</p>',
    });
    expect(smtpServer.messages).toHaveLength(1);
  });

  it('waits for a mail that arrives after waitForMessage is called', async () => {
    const waiting = smtpServer.waitForMessage((received) => received.subject === 'Later');

    await createTransport(smtpServer.url).sendMail({
      from: 'noreply@hogbase.test',
      to: 'bob@example.test',
      subject: 'Later',
      text: 'body',
    });

    await expect(waiting).resolves.toMatchObject({ subject: 'Later', to: ['bob@example.test'] });
  });

  it('rejects waitForMessage when no matching mail arrives in time', async () => {
    await expect(smtpServer.waitForMessage(() => true, 50)).rejects.toThrow(/No matching mail within 50 ms/);
  });
});

describe('startDnsTestServer', () => {
  let dnsServer: DnsTestServer;
  let resolver: Resolver;

  beforeEach(async () => {
    dnsServer = await startDnsTestServer();
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([dnsServer.address]);
  });

  afterEach(async () => {
    await dnsServer.stop();
  });

  it('answers TXT records set with setTxt, matching names case-insensitively', async () => {
    expect(dnsServer.address).toMatch(/^127\.0\.0\.1:\d+$/);
    dnsServer.setTxt('_hogbase-challenge.Example.test', ['token-123', 'v=spf1 -all']);

    const records = await resolver.resolveTxt('_hogbase-challenge.example.TEST');

    expect(records.map((chunks) => chunks.join('')).sort()).toEqual(['token-123', 'v=spf1 -all']);
  });

  it('answers a TXT value longer than 255 bytes as chunks of one record', async () => {
    const longValue = 'k'.repeat(600);
    dnsServer.setTxt('dkim.example.test', [longValue]);

    const records = await resolver.resolveTxt('dkim.example.test');

    expect(records).toHaveLength(1);
    expect(records[0]?.join('')).toBe(longValue);
  });

  it('answers NXDOMAIN for unknown names and after clear()', async () => {
    await expect(resolver.resolveTxt('unknown.example.test')).rejects.toMatchObject({
      code: expect.stringMatching(/^(ENOTFOUND|ENODATA)$/),
    });

    dnsServer.setTxt('known.example.test', ['value']);
    await expect(resolver.resolveTxt('known.example.test')).resolves.toEqual([['value']]);

    dnsServer.clear();
    await expect(resolver.resolveTxt('known.example.test')).rejects.toMatchObject({
      code: expect.stringMatching(/^(ENOTFOUND|ENODATA)$/),
    });
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import { AppTransformations, createAppsRuntime, type AppsRuntime } from '@hogbase/apps-runtime';
import { loadAppsRuntimeConfig, openSecretBox } from '@hogbase/config';
import { MembershipLevel, PluginConfig, PluginLogEntry } from '@hogbase/postgres';
import { startManagementTestApp, type ApiClient, type ManagementTestApp } from './management-test-app';

const MASK = '**************** POSTHOG SECRET FIELD ****************';

const PLUGIN_JSON = {
  name: 'Configurable webhook',
  config: [
    { markdown: 'Where events go' },
    { key: 'url', name: 'Webhook URL', type: 'string', required: true },
    { key: 'apiKey', name: 'API key', type: 'string', secret: true },
    { key: 'method', name: 'Method', type: 'choice', choices: ['POST', 'PUT'], default: 'POST' },
    { key: 'headers', name: 'Headers', type: 'json' },
  ],
};

describe('plugin configs (/api/projects/:project_id/plugin_configs/)', () => {
  const encryptionKey = randomBytes(32);
  let testApp: ManagementTestApp;
  let api: ApiClient;
  let ownerKey: string;
  let organizationId: string;
  let projectId: number;
  let pluginId: number;
  let otherPluginId: number;

  const configs = (suffix = '', project = projectId) => `/api/projects/${project}/plugin_configs/${suffix}`;

  async function sourceApp(name: string, files: Record<string, string>, client = api, org = organizationId) {
    const created = await client.post(`/api/organizations/${org}/pipeline_frontend_apps/`, {
      plugin_type: 'source',
      name,
    });
    expect(created.status).toBe(201);
    const updated = await client.patch(
      `/api/organizations/${org}/pipeline_frontend_apps/${created.body.id}/update_source/`,
      files,
    );
    expect(updated.status).toBe(200);
    return created.body.id as number;
  }

  beforeAll(async () => {
    testApp = await startManagementTestApp({ encryptionKeys: [encryptionKey] });
    ({
      api,
      key: ownerKey,
      organizationId,
      projectId,
    } = await testApp.createOwner('owner@plugin-configs.test', 'Configs org'));
    const index = 'export function composeWebhook() { return null; }';
    pluginId = await sourceApp('Configurable webhook', {
      'plugin.json': JSON.stringify(PLUGIN_JSON),
      'index.ts': index,
    });
    otherPluginId = await sourceApp('Second', {
      'plugin.json': JSON.stringify({ name: 'Second', stateless: true }),
      'index.ts': index,
    });
  }, 60_000);

  afterAll(async () => {
    await testApp?.close();
  });

  async function stored(id: number) {
    return testApp.dataSource.getRepository(PluginConfig).findOneByOrFail({ id });
  }

  let configId: number;

  it('creates a config: 201, the secret masked, sealed in storage, a web token set', async () => {
    const response = await api.post(configs(), {
      plugin: pluginId,
      enabled: true,
      order: 2,
      config: { url: 'https://hooks.example.com', apiKey: 'very-secret', headers: '{"X-A": "1"}' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      plugin: pluginId,
      enabled: true,
      order: 2,
      config: { url: 'https://hooks.example.com', apiKey: MASK, headers: '{"X-A": "1"}' },
      error: null,
      team_id: projectId,
      plugin_info: expect.objectContaining({ id: pluginId, name: 'Configurable webhook' }),
      delivery_rate_24h: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      name: null,
      description: null,
      deleted: false,
      // The organization's own app: the config follows its latest code.
      code_pinned_at: null,
      code_update_available: false,
    });
    configId = response.body.id;
    const row = await stored(configId);
    expect(JSON.stringify(row.config)).not.toContain('very-secret');
    expect(row.config.url).toBe('https://hooks.example.com');
    const box = await openSecretBox([encryptionKey], '/tmp/hogbase-test-unused');
    expect(JSON.parse(box.open((row.config.apiKey as { sealed: string }).sealed))).toBe('very-secret');
    expect(row.webToken.length).toBeGreaterThanOrEqual(32);
  });

  it('keeps a secret that is omitted or sent back masked, and seals a new one', async () => {
    const before = (await stored(configId)).config.apiKey;
    const masked = await api.patch(configs(`${configId}/`), {
      config: { url: 'https://hooks.example.com/v2', apiKey: MASK },
    });
    expect(masked.status).toBe(200);
    expect(masked.body.config).toEqual({ url: 'https://hooks.example.com/v2', apiKey: MASK });
    expect((await stored(configId)).config.apiKey).toEqual(before);
    const omitted = await api.patch(configs(`${configId}/`), {
      config: { url: 'https://hooks.example.com/v3' },
    });
    expect(omitted.body.config.apiKey).toBe(MASK);
    expect((await stored(configId)).config.apiKey).toEqual(before);
    const replaced = await api.patch(configs(`${configId}/`), {
      config: { url: 'https://hooks.example.com/v3', apiKey: 'rotated' },
    });
    expect(replaced.body.config.apiKey).toBe(MASK);
    expect((await stored(configId)).config.apiKey).not.toEqual(before);
  });

  it.each([
    [{ url: 'https://x', nope: 1 }, 'config', '"nope" is not a field of this app\'s config.'],
    [{ apiKey: 'k' }, 'config__url', '"Webhook URL" is required.'],
    [
      { url: 'https://x', method: 'DELETE' },
      'config__method',
      '"DELETE" is not a valid choice for "Method".',
    ],
    [{ url: 'https://x', headers: '{not json' }, 'config__headers', '"Headers" is not valid JSON.'],
    [{ url: 42 }, 'config__url', '"Webhook URL" must be a string.'],
  ])('refuses config %j with 400 on %s', async (config, attr, detail) => {
    const response = await api.patch(configs(`${configId}/`), { config });
    expect([response.status, response.body.type, response.body.attr, response.body.detail]).toEqual([
      400,
      'validation_error',
      attr,
      detail,
    ]);
  });

  it('refuses a second config of the same app, an unknown app, and a config for a stateless app', async () => {
    const duplicate = await api.post(configs(), { plugin: pluginId, config: { url: 'https://x' } });
    expect([duplicate.status, duplicate.body.attr]).toEqual([400, 'plugin']);
    const unknown = await api.post(configs(), { plugin: 99999999 });
    expect([unknown.status, unknown.body]).toEqual([
      400,
      {
        type: 'validation_error',
        code: 'does_not_exist',
        detail: 'Invalid pk "99999999" - object does not exist.',
        attr: 'plugin',
      },
    ]);
    const stateless = await api.post(configs(), { plugin: otherPluginId, config: { any: 'thing' } });
    expect([stateless.status, stateless.body.detail]).toEqual([
      400,
      'Stateless plugins cannot have a config!',
    ]);
    const missing = await api.post(configs(), {});
    expect([missing.status, missing.body.attr, missing.body.code]).toEqual([400, 'plugin', 'required']);
  });

  it("refuses another organization's app as an unknown one", async () => {
    const outsider = await testApp.createOwner('outsider@plugin-configs.test');
    const foreign = await sourceApp(
      'Foreign',
      { 'plugin.json': JSON.stringify({ name: 'Foreign' }), 'index.ts': 'export function onEvent() {}' },
      outsider.api,
      outsider.organizationId,
    );
    const response = await api.post(configs(), { plugin: foreign });
    expect([response.status, response.body.detail]).toEqual([
      400,
      `Invalid pk "${foreign}" - object does not exist.`,
    ]);
    const theirs = await outsider.api.get(configs());
    expect(theirs.status).toBe(404);
    expect(theirs.body.detail).toBe('Project not found.');
  });

  it('lists configs by order then app, with the delivery rate of the last 24 hours', async () => {
    const second = await api.post(configs(), { plugin: otherPluginId, enabled: false, order: 1 });
    expect(second.status).toBe(201);
    await testApp.dataSource.query(
      `INSERT INTO plugin_delivery_stats (plugin_config_id, hour, succeeded, failed) VALUES
       ($1, date_trunc('hour', now()), 3, 1), ($1, date_trunc('hour', now()) - interval '3 days', 0, 100)`,
      [configId],
    );
    const list = await api.get(configs());
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ count: 2, next: null, previous: null });
    expect(list.body.results.map((config: { id: number }) => config.id)).toEqual([second.body.id, configId]);
    expect(list.body.results[1].delivery_rate_24h).toBe(0.75);
    expect(list.body.results[0].delivery_rate_24h).toBeNull();
    expect(list.body.results[0].plugin_info).toBeUndefined();
    const retrieved = await api.get(configs(`${configId}/`));
    expect(retrieved.body.plugin_info).toMatchObject({ id: pluginId });
  });

  it('lists log lines newest first, filtered by type, search, time and limit', async () => {
    const base = Date.parse('2026-01-01T00:00:00Z');
    await testApp.dataSource.getRepository(PluginLogEntry).insert(
      ['INFO', 'ERROR', 'LOG', 'ERROR'].map((type, index) => ({
        pluginConfigId: configId,
        pluginId,
        teamId: projectId,
        timestamp: new Date(base + index * 1000),
        source: 'PLUGIN' as const,
        type: type as 'INFO',
        message: `line ${index} ${type === 'ERROR' ? 'failed 100%' : 'ok'}`,
        instanceId: 'instance-1',
      })),
    );
    const all = await api.get(configs(`${configId}/logs/`));
    expect(all.status).toBe(200);
    expect(all.body.results.map((entry: { message: string }) => entry.message)).toEqual([
      'line 3 failed 100%',
      'line 2 ok',
      'line 1 failed 100%',
      'line 0 ok',
    ]);
    expect(all.body.results[0]).toEqual({
      id: expect.any(String),
      team_id: projectId,
      plugin_id: pluginId,
      plugin_config_id: configId,
      timestamp: '2026-01-01T00:00:03.000Z',
      source: 'PLUGIN',
      type: 'ERROR',
      message: 'line 3 failed 100%',
      instance_id: 'instance-1',
    });
    const errors = await api.get(configs(`${configId}/logs/?type_filter=ERROR&limit=1`));
    expect(errors.body.results.map((entry: { message: string }) => entry.message)).toEqual([
      'line 3 failed 100%',
    ]);
    const search = await api.get(configs(`${configId}/logs/?search=${encodeURIComponent('100%')}`));
    expect(search.body.results).toHaveLength(2);
    const window = await api.get(
      configs(`${configId}/logs/?after=2026-01-01T00:00:00.500Z&before=2026-01-01T00:00:02.500Z`),
    );
    expect(window.body.results.map((entry: { message: string }) => entry.message)).toEqual([
      'line 2 ok',
      'line 1 failed 100%',
    ]);
    const badType = await api.get(configs(`${configId}/logs/?type_filter=LOUD`));
    expect([badType.status, badType.body.attr]).toEqual([400, 'type_filter']);
  });

  it('pages log lines with limit and offset: the count of lines, absolute next and previous links that keep the filters (issue 29, defect 5)', async () => {
    const base = Date.parse('2026-02-01T00:00:00Z');
    await testApp.dataSource.getRepository(PluginLogEntry).insert(
      Array.from({ length: 7 }, (_, index) => ({
        pluginConfigId: configId,
        pluginId,
        teamId: projectId,
        timestamp: new Date(base + index * 1000),
        source: 'PLUGIN' as const,
        type: 'INFO' as const,
        message: `paged line ${index}`,
        instanceId: 'instance-1',
      })),
    );
    const logs = `${configs(`${configId}/logs/`)}`;
    const url = (query: string) => `${testApp.baseUrl}${logs}?${query}`;
    const messages = (body: { results: { message: string }[] }) => body.results.map((entry) => entry.message);

    const everything = await api.get(`${logs}?limit=5`);
    expect(everything.body.results).toHaveLength(5);
    expect(everything.body).toMatchObject({ next: url('limit=5&offset=5'), previous: null });
    expect(everything.body.count).toBeGreaterThan(5);

    const first = await api.get(`${logs}?search=paged&limit=3`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      count: 7,
      next: url('limit=3&offset=3&search=paged'),
      previous: null,
    });
    expect(messages(first.body)).toEqual(['paged line 6', 'paged line 5', 'paged line 4']);
    const second = await api.get(first.body.next.slice(testApp.baseUrl.length));
    expect(second.body).toMatchObject({
      count: 7,
      next: url('limit=3&offset=6&search=paged'),
      previous: url('limit=3&search=paged'),
    });
    expect(messages(second.body)).toEqual(['paged line 3', 'paged line 2', 'paged line 1']);
    const last = await api.get(second.body.next.slice(testApp.baseUrl.length));
    expect(last.body).toMatchObject({ count: 7, next: null, previous: url('limit=3&offset=3&search=paged') });
    expect(messages(last.body)).toEqual(['paged line 0']);

    const repeatedType = await api.get(`${logs}?search=paged&type_filter=INFO&type_filter=ERROR&limit=1`);
    expect([repeatedType.status, repeatedType.body.count]).toEqual([200, 7]);

    for (const [query, attr] of [
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['limit=-5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=two', 'offset'],
      ['limit=1&limit=2', 'limit'],
    ]) {
      const response = await api.get(`${logs}?${query}`);
      expect({ query, status: response.status, attr: response.body.attr }).toEqual({
        query,
        status: 400,
        attr,
      });
    }
  });

  it('records config activity under the organization', async () => {
    const activity = await api.get(
      `/api/organizations/${organizationId}/pipeline_destinations/activity/?limit=50`,
    );
    const entries = activity.body.results.filter(
      (entry: { scope: string; item_id: string }) =>
        entry.scope === 'PluginConfig' && entry.item_id === String(configId),
    );
    expect(entries.map((entry: { activity: string }) => entry.activity)).toEqual(
      expect.arrayContaining(['config_created', 'config_updated']),
    );
    expect(JSON.stringify(entries)).not.toContain('rotated');
  });

  it('answers 403 to a key without plugin:write, and soft-deletes on DELETE (then 404)', async () => {
    const readOnly = testApp.client(
      `Bearer ${await testApp.createKey('owner@plugin-configs.test', ['plugin:read'])}`,
    );
    expect((await readOnly.get(configs(`${configId}/`))).status).toBe(200);
    const refused = await readOnly.delete(configs(`${configId}/`));
    expect([refused.status, refused.body.detail]).toEqual([
      403,
      "API key missing required scope 'plugin:write'",
    ]);
    const deleted = await api.delete(configs(`${configId}/`));
    expect(deleted.status).toBe(204);
    expect((await api.get(configs(`${configId}/`))).status).toBe(404);
    expect(await stored(configId)).toMatchObject({ deleted: true, enabled: false });
    const list = await api.get(configs());
    expect(list.body.results.map((config: { id: number }) => config.id)).not.toContain(configId);
  });

  describe('attachments: multipart add_attachment[<key>] and remove_attachment[<key>]', () => {
    const ATTACHMENT_PLUGIN_JSON = {
      name: 'Certificate app',
      config: [
        { key: 'label', name: 'Label', type: 'string' },
        { key: 'certificate', name: 'Certificate', type: 'attachment', required: true },
        { key: 'privateKey', name: 'Private key', type: 'attachment', secret: true },
      ],
    };
    let attachmentPluginId: number;
    let attachmentConfigId: number;

    /** A multipart request as a browser's FormData sends it, with the owner's key. */
    async function sendForm(method: 'POST' | 'PATCH', path: string, form: FormData, key = ownerKey) {
      const response = await fetch(`${testApp.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}` },
        body: form,
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    }

    function form(fields: Record<string, string>, files: Record<string, [string, string, string?]> = {}) {
      const data = new FormData();
      for (const [name, value] of Object.entries(fields)) data.append(name, value);
      for (const [name, [contents, fileName, type]] of Object.entries(files)) {
        data.append(name, new Blob([contents], type ? { type } : {}), fileName);
      }
      return data;
    }

    /** What the apps runtime reads for meta.attachments (libs/apps-runtime enabled-apps.cache.ts). */
    async function runtimeAttachments(pluginConfigId: number) {
      const rows: {
        key: string;
        content_type: string;
        file_name: string;
        file_size: number;
        contents: Buffer;
      }[] = await testApp.dataSource.query(
        'SELECT key, content_type, file_name, file_size, contents FROM plugin_attachments WHERE plugin_config_id = $1 ORDER BY key',
        [pluginConfigId],
      );
      return rows.map((row) => ({ ...row, contents: row.contents.toString('utf8') }));
    }

    beforeAll(async () => {
      attachmentPluginId = await sourceApp('Certificate app', {
        'plugin.json': JSON.stringify(ATTACHMENT_PLUGIN_JSON),
        'index.ts': 'export function composeWebhook() { return null; }',
      });
    });

    it('refuses a config without its required attachment, and an attachment value sent as text', async () => {
      const missing = await api.post(configs(), { plugin: attachmentPluginId, config: { label: 'x' } });
      expect([missing.status, missing.body.code, missing.body.attr, missing.body.detail]).toEqual([
        400,
        'required',
        'config__certificate',
        '"Certificate" is required.',
      ]);
      const asText = await sendForm(
        'POST',
        configs(),
        form({ plugin: String(attachmentPluginId), config: JSON.stringify({ certificate: 'PEM TEXT' }) }),
      );
      expect([asText.status, asText.body.attr, asText.body.detail]).toEqual([
        400,
        'config__certificate',
        '"Certificate" is an attachment: upload it as the file add_attachment[certificate].',
      ]);
      expect(await testApp.dataSource.query('SELECT id FROM plugin_attachments')).toEqual([]);
    });

    it('creates a config from a form: fields, config JSON and files; shows files, masks a secret one', async () => {
      const response = await sendForm(
        'POST',
        configs(),
        form(
          {
            plugin: String(attachmentPluginId),
            enabled: 'true',
            order: '3',
            config: JSON.stringify({ label: 'production' }),
          },
          {
            'add_attachment[certificate]': [
              '-----BEGIN CERTIFICATE-----',
              'café.pem',
              'application/x-pem-file',
            ],
            'add_attachment[privateKey]': ['very secret key', 'key.pem', 'application/x-pem-file'],
          },
        ),
      );
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        plugin: attachmentPluginId,
        enabled: true,
        order: 3,
        config: {
          label: 'production',
          certificate: {
            uid: expect.any(Number),
            saved: true,
            size: Buffer.byteLength('-----BEGIN CERTIFICATE-----'),
            name: 'café.pem',
            type: 'application/x-pem-file',
          },
          privateKey: { uid: -1, saved: true, size: -1, name: MASK, type: 'application/octet-stream' },
        },
      });
      expect(JSON.stringify(response.body)).not.toContain('key.pem');
      attachmentConfigId = response.body.id;
      expect(await runtimeAttachments(attachmentConfigId)).toEqual([
        {
          key: 'certificate',
          content_type: 'application/x-pem-file',
          file_name: 'café.pem',
          file_size: 27,
          contents: '-----BEGIN CERTIFICATE-----',
        },
        {
          key: 'privateKey',
          content_type: 'application/x-pem-file',
          file_name: 'key.pem',
          file_size: 15,
          contents: 'very secret key',
        },
      ]);
      // An attachment lives in its own table, never in the config's values.
      expect((await stored(attachmentConfigId)).config).toEqual({ label: 'production' });
      const listed = await api.get(configs());
      const shown = listed.body.results.find((config: { id: number }) => config.id === attachmentConfigId);
      expect(shown.config.certificate).toEqual(response.body.config.certificate);
    });

    it('keeps the attachments through a JSON update that sends the config back as shown', async () => {
      const shown = (await api.get(configs(`${attachmentConfigId}/`))).body;
      const response = await api.patch(configs(`${attachmentConfigId}/`), {
        config: { ...shown.config, label: 'staging' },
      });
      expect(response.status).toBe(200);
      expect(response.body.config).toEqual({ ...shown.config, label: 'staging' });
      expect((await stored(attachmentConfigId)).config).toEqual({ label: 'staging' });
      expect((await runtimeAttachments(attachmentConfigId)).map((row) => row.key)).toEqual([
        'certificate',
        'privateKey',
      ]);
    });

    it('replaces a file and removes another through PATCH, with a new updated_at for the runtime', async () => {
      const before = await stored(attachmentConfigId);
      const response = await sendForm(
        'PATCH',
        configs(`${attachmentConfigId}/`),
        form(
          { 'remove_attachment[privateKey]': 'true' },
          { 'add_attachment[certificate]': ['rotated certificate', 'ca-2026.pem'] },
        ),
      );
      expect(response.status).toBe(200);
      expect(response.body.config).toEqual({
        label: 'staging',
        certificate: {
          uid: expect.any(Number),
          saved: true,
          size: 19,
          name: 'ca-2026.pem',
          type: 'application/octet-stream',
        },
      });
      expect(await runtimeAttachments(attachmentConfigId)).toEqual([
        {
          key: 'certificate',
          content_type: 'application/octet-stream',
          file_name: 'ca-2026.pem',
          file_size: 19,
          contents: 'rotated certificate',
        },
      ]);
      expect((await stored(attachmentConfigId)).updatedAt.getTime()).toBeGreaterThan(
        before.updatedAt.getTime(),
      );
    });

    it.each([
      [
        'removing a required attachment',
        form({ 'remove_attachment[certificate]': 'true' }),
        'config__certificate',
        '"Certificate" is required.',
      ],
      [
        'a file for a field that is not an attachment',
        form({}, { 'add_attachment[label]': ['text', 'label.txt'] }),
        'add_attachment[label]',
        '"Label" is not an attachment: send its value in config.',
      ],
      [
        'a file for a key the schema does not have',
        form({}, { 'add_attachment[nope]': ['text', 'nope.txt'] }),
        'add_attachment[nope]',
        '"nope" is not a field of this app\'s config.',
      ],
      [
        'adding and removing the same key',
        form({ 'remove_attachment[privateKey]': 'true' }, { 'add_attachment[privateKey]': ['k', 'k.pem'] }),
        'add_attachment[privateKey]',
        '"Private key" is both added and removed in one request.',
      ],
      [
        'a file under another field name',
        form({}, { upload: ['text', 'file.txt'] }),
        null,
        'Unexpected file "upload": send add_attachment[<key>].',
      ],
      [
        'a config field that is not JSON',
        form({ config: '{not json' }),
        'config',
        'JSON parse error - the config field is not valid JSON.',
      ],
    ])('refuses %s with 400 and changes nothing', async (_name, body, attr, detail) => {
      const before = await runtimeAttachments(attachmentConfigId);
      const response = await sendForm('PATCH', configs(`${attachmentConfigId}/`), body);
      expect([response.status, response.body.attr, response.body.detail]).toEqual([400, attr, detail]);
      expect(await runtimeAttachments(attachmentConfigId)).toEqual(before);
    });

    it('refuses a file larger than 1 MiB with 413, naming the field', async () => {
      const response = await sendForm(
        'PATCH',
        configs(`${attachmentConfigId}/`),
        form({}, { 'add_attachment[certificate]': ['x'.repeat(1024 * 1024 + 1), 'big.pem'] }),
      );
      expect([response.status, response.body.code, response.body.attr, response.body.detail]).toEqual([
        413,
        'payload_too_large',
        'add_attachment[certificate]',
        'The file add_attachment[certificate] is larger than 1048576 bytes (1 MiB), the most an attachment takes.',
      ]);
      expect((await runtimeAttachments(attachmentConfigId))[0].file_name).toBe('ca-2026.pem');
      const exactly = await sendForm(
        'PATCH',
        configs(`${attachmentConfigId}/`),
        form({}, { 'add_attachment[certificate]': ['y'.repeat(1024 * 1024), 'limit.pem'] }),
      );
      expect(exactly.status).toBe(200);
      expect(exactly.body.config.certificate.size).toBe(1024 * 1024);
    });

    it('answers 400 to a form cut short or without a boundary, not a server error', async () => {
      const truncated = await api.request('PATCH', configs(`${attachmentConfigId}/`), {
        headers: { 'Content-Type': 'multipart/form-data; boundary=XYZ' },
        rawBody:
          '--XYZ\r\nContent-Disposition: form-data; name="add_attachment[certificate]"; filename="a.pem"\r\n\r\nhalf',
      });
      expect([truncated.status, truncated.body.code]).toEqual([400, 'parse_error']);
      const noBoundary = await api.request('PATCH', configs(`${attachmentConfigId}/`), {
        headers: { 'Content-Type': 'multipart/form-data' },
        rawBody: 'enabled=true',
      });
      expect([noBoundary.status, noBoundary.body.code]).toEqual([400, 'parse_error']);
    });

    it('answers 403 to a form from a key without plugin:write, before storing anything', async () => {
      const readOnly = await testApp.createKey('owner@plugin-configs.test', ['plugin:read']);
      const before = await runtimeAttachments(attachmentConfigId);
      const response = await sendForm(
        'PATCH',
        configs(`${attachmentConfigId}/`),
        form({}, { 'add_attachment[certificate]': ['forged', 'forged.pem'] }),
        readOnly,
      );
      expect([response.status, response.body.detail]).toEqual([
        403,
        "API key missing required scope 'plugin:write'",
      ]);
      expect(await runtimeAttachments(attachmentConfigId)).toEqual(before);
    });

    it('answers 415 to a form on routes that do not take one', async () => {
      const flag = await sendForm(
        'POST',
        `/api/projects/${projectId}/feature_flags/`,
        form({ key: 'a-flag' }),
      );
      expect([flag.status, flag.body.code]).toEqual([415, 'unsupported_media_type']);
      const app = await sendForm(
        'PATCH',
        `/api/organizations/${organizationId}/pipeline_frontend_apps/${attachmentPluginId}/`,
        form({ name: 'renamed' }),
      );
      expect([app.status, app.body.code]).toEqual([415, 'unsupported_media_type']);
    });

    it('records attachment activity, a secret file by a masked name', async () => {
      const activity = await api.get(
        `/api/organizations/${organizationId}/pipeline_destinations/activity/?limit=50`,
      );
      const entries = activity.body.results.filter(
        (entry: { scope: string; item_id: string }) =>
          entry.scope === 'PluginConfig' && entry.item_id === String(attachmentConfigId),
      );
      expect(entries.map((entry: { activity: string }) => entry.activity)).toEqual(
        expect.arrayContaining(['attachment_created', 'attachment_updated', 'attachment_deleted']),
      );
      expect(JSON.stringify(entries)).not.toContain('key.pem');
      const deleted = entries.find((entry: { activity: string }) => entry.activity === 'attachment_deleted');
      expect(deleted.detail.changes).toEqual([
        expect.objectContaining({ action: 'deleted', field: 'privateKey', before: MASK, after: null }),
      ]);
    });
  });

  describe('members and admins of the organization', () => {
    const insufficient = 'Your organization access level is insufficient.';
    let member: ApiClient;
    let admin: ApiClient;
    let appId: number;
    let existing: number;

    beforeAll(async () => {
      member = (
        await testApp.createMember('member@plugin-configs.test', organizationId, MembershipLevel.Member)
      ).api;
      admin = (await testApp.createMember('admin@plugin-configs.test', organizationId, MembershipLevel.Admin))
        .api;
      appId = await sourceApp('Enabled by admins', {
        'plugin.json': JSON.stringify({
          name: 'Enabled by admins',
          config: [{ key: 'url', type: 'string' }],
        }),
        'index.ts': 'export function composeWebhook() { return null; }',
      });
      const created = await api.post(configs(), { plugin: appId });
      expect(created.status).toBe(201);
      existing = created.body.id;
    });

    it('refuses a member creating, configuring, enabling, upgrading and deleting a config, and changes nothing', async () => {
      const before = await stored(existing);
      const calls: [string, string, unknown][] = [
        ['POST', configs(), { plugin: appId, enabled: true }],
        ['PATCH', configs(`${existing}/`), { enabled: true, config: { url: 'https://member.example' } }],
        ['POST', configs(`${existing}/upgrade/`), {}],
        ['DELETE', configs(`${existing}/`), undefined],
      ];
      for (const [method, path, body] of calls) {
        const response = await member.request(method, path, { body });
        expect({ call: `${method} ${path}`, status: response.status, detail: response.body.detail }).toEqual({
          call: `${method} ${path}`,
          status: 403,
          detail: insufficient,
        });
      }
      expect(await stored(existing)).toEqual(before);
    });

    it("lets a member read the project's configs and their logs", async () => {
      expect((await member.get(configs())).status).toBe(200);
      expect((await member.get(configs(`${existing}/`))).status).toBe(200);
      expect((await member.get(configs(`${existing}/logs/`))).status).toBe(200);
    });

    it('lets an admin enable and configure an app', async () => {
      const response = await admin.patch(configs(`${existing}/`), {
        enabled: true,
        config: { url: 'https://admin.example' },
      });
      expect([response.status, response.body.enabled, response.body.config]).toEqual([
        200,
        true,
        { url: 'https://admin.example' },
      ]);
    });
  });

  describe('capabilities a body declares (issue 29, defect 1)', () => {
    let pool: Pool;
    let runtime: AppsRuntime;

    beforeAll(() => {
      const url = (testApp.dataSource.options as { url?: string }).url;
      pool = new Pool({ connectionString: url, max: 2 });
      runtime = createAppsRuntime(
        pool,
        {
          ...loadAppsRuntimeConfig({ DATA_DIR: '/tmp/hogbase-test-unused' }),
          encryptionKeys: [encryptionKey],
        },
        pino({ level: 'silent' }),
      );
    });

    afterAll(async () => {
      await runtime?.close();
      await pool?.end();
    });

    it('never decide what ingestion calls: the runtime goes by what the code exports', async () => {
      const owner = await testApp.createOwner('declared@plugin-configs.test', 'Declared capabilities');
      const app = await sourceApp(
        'Declares processEvent',
        {
          'plugin.json': JSON.stringify({ name: 'Declares processEvent' }),
          'index.ts': 'export function composeWebhook() { return null; }',
        },
        owner.api,
        owner.organizationId,
      );
      const enabled = await owner.api.post(configs('', owner.projectId), { plugin: app, enabled: true });
      expect(enabled.status).toBe(201);
      const declared = await owner.api.patch(
        `/api/organizations/${owner.organizationId}/pipeline_destinations/${app}/`,
        {
          capabilities: { methods: ['processEvent', 'composeWebhook'], scheduled_tasks: ['runEveryMinute'] },
          metrics: { transformed: 'sum' },
        },
      );
      expect([declared.status, declared.body.capabilities.methods]).toEqual([
        200,
        ['processEvent', 'composeWebhook'],
      ]);
      const transformationTeams = await new AppTransformations(
        pool,
        runtime.apps,
        pino({ level: 'silent' }),
        new Registry(),
      ).transformationTeams();
      expect(transformationTeams.has(owner.projectId)).toBe(false);
      const instance = await runtime.apps.forConfig(enabled.body.id);
      expect(await instance?.exports()).toEqual({ methods: ['composeWebhook'], jobs: [] });
    });
  });

  describe("a config of another organization's global app", () => {
    const PUBLISHED_SCHEMA = [
      { key: 'url', name: 'Webhook URL', type: 'string', required: true },
      { key: 'token', name: 'Token', type: 'string', secret: true },
    ];
    /** A destination whose webhook body names the code's version and the token it was given. */
    const destination = (version: string) =>
      `export function composeWebhook(event: { event: string }, { config }: { config: Record<string, string> }) {
        return { url: config.url, body: '${version}:' + event.event + ':' + config.token };
      }`;
    let publisher: Awaited<ReturnType<ManagementTestApp['createOwner']>>;
    let appId: number;
    let victimConfig: Record<string, any>;
    let publisherConfigId: number;
    let pool: Pool;
    let runtime: AppsRuntime;

    const publisherApp = (suffix = '') =>
      `/api/organizations/${publisher.organizationId}/pipeline_destinations/${appId}/${suffix}`;

    /** What the apps runtime (ingestion's destinations, the workers) runs for the config now. */
    async function webhookBody(configId: number): Promise<unknown> {
      const instance = await runtime.apps.forConfig(configId);
      const webhook = (await instance?.call('composeWebhook', {
        uuid: randomUUID(),
        event: 'purchase',
        distinct_id: 'buyer',
        properties: {},
      })) as { body?: unknown } | undefined;
      return webhook?.body;
    }

    beforeAll(async () => {
      publisher = await testApp.createOwner('publisher@plugin-configs.test', 'Publisher of a global app');
      appId = await sourceApp(
        'Published webhook',
        {
          'plugin.json': JSON.stringify({ name: 'Published webhook', config: PUBLISHED_SCHEMA }),
          'index.ts': destination('v1'),
        },
        publisher.api,
        publisher.organizationId,
      );
      // Only the instance operator makes an app global (the admin CLI's set-app-global).
      await testApp.bootstrap.setAppGlobal(String(appId), true);
      const url = (testApp.dataSource.options as { url?: string }).url;
      pool = new Pool({ connectionString: url, max: 2 });
      runtime = createAppsRuntime(
        pool,
        {
          ...loadAppsRuntimeConfig({ DATA_DIR: '/tmp/hogbase-test-unused' }),
          encryptionKeys: [encryptionKey],
        },
        pino({ level: 'silent' }),
      );
    });

    afterAll(async () => {
      await runtime?.close();
      await pool?.end();
    });

    it('pins the code the admin enabled: the config says when, and that nothing changed since', async () => {
      const created = await api.post(configs(), {
        plugin: appId,
        enabled: true,
        config: { url: 'https://victim.example/hook', token: 'victim-secret' },
      });
      expect(created.status).toBe(201);
      victimConfig = created.body;
      expect(victimConfig).toMatchObject({
        code_pinned_at: expect.any(String),
        code_update_available: false,
        config: { url: 'https://victim.example/hook', token: MASK },
      });
      const own = await publisher.api.post(configs('', publisher.projectId), {
        plugin: appId,
        enabled: true,
        config: { url: 'https://publisher.example/hook' },
      });
      expect([own.status, own.body.code_pinned_at, own.body.code_update_available]).toEqual([
        201,
        null,
        false,
      ]);
      publisherConfigId = own.body.id;
      expect(await webhookBody(victimConfig.id)).toBe('v1:purchase:victim-secret');
    });

    it("keeps running the pinned code after the app's organization rewrites it; its own config follows", async () => {
      const rewritten = await publisher.api.patch(publisherApp('update_source/'), {
        'plugin.json': JSON.stringify({
          name: 'Published webhook',
          config: [...PUBLISHED_SCHEMA, { key: 'region', name: 'Region', type: 'string' }],
        }),
        'index.ts': destination('v2'),
      });
      expect(rewritten.status).toBe(200);
      expect(await webhookBody(victimConfig.id)).toBe('v1:purchase:victim-secret');
      expect(await webhookBody(publisherConfigId)).toBe('v2:purchase:undefined');
      const shown = await api.get(configs(`${victimConfig.id}/`));
      expect(shown.body).toMatchObject({
        code_pinned_at: victimConfig.code_pinned_at,
        code_update_available: true,
        config: { url: 'https://victim.example/hook', token: MASK },
      });
      // The pinned schema still decides: a field only the new version has is refused.
      const newField = await api.patch(configs(`${victimConfig.id}/`), {
        config: { url: 'https://victim.example/hook', region: 'eu' },
      });
      expect([newField.status, newField.body.detail]).toEqual([
        400,
        '"region" is not a field of this app\'s config.',
      ]);
    });

    it("moves to the new code only when the project's admin upgrades the config", async () => {
      const member = await testApp.createMember(
        'member-of-victim@plugin-configs.test',
        organizationId,
        MembershipLevel.Member,
      );
      const refused = await member.api.post(configs(`${victimConfig.id}/upgrade/`), {});
      expect(refused.status).toBe(403);
      expect(await webhookBody(victimConfig.id)).toBe('v1:purchase:victim-secret');

      const upgraded = await api.post(configs(`${victimConfig.id}/upgrade/`), {});
      expect(upgraded.status).toBe(200);
      expect(upgraded.body).toMatchObject({
        id: victimConfig.id,
        code_update_available: false,
        config: { url: 'https://victim.example/hook', token: MASK },
        plugin_info: expect.objectContaining({ id: appId }),
      });
      expect(Date.parse(upgraded.body.code_pinned_at)).toBeGreaterThan(
        Date.parse(victimConfig.code_pinned_at),
      );
      expect(await webhookBody(victimConfig.id)).toBe('v2:purchase:victim-secret');
      const withRegion = await api.patch(configs(`${victimConfig.id}/`), {
        config: { url: 'https://victim.example/hook', region: 'eu' },
      });
      expect(withRegion.status).toBe(200);
    });

    it("has ingestion call a pinned config by its copy's methods, not the app's new ones, until it is upgraded", async () => {
      /** Whether ingestion runs the project's transformations (a fresh look: teams are cached 5 s). */
      const transforms = async (project: number) =>
        (
          await new AppTransformations(
            pool,
            runtime.apps,
            pino({ level: 'silent' }),
            new Registry(),
          ).transformationTeams()
        ).has(project);
      const rewritten = await publisher.api.patch(publisherApp('update_source/'), {
        'index.ts': 'export function processEvent(event: unknown) { return event; }',
      });
      expect(rewritten.status).toBe(200);
      // The victim's pinned copy exports composeWebhook only; the publisher's config follows the app.
      expect([await transforms(projectId), await transforms(publisher.projectId)]).toEqual([false, true]);

      const upgraded = await api.post(configs(`${victimConfig.id}/upgrade/`), {});
      expect(upgraded.status).toBe(200);
      expect(await transforms(projectId)).toBe(true);
    });

    it("answers a config of the organization's own app as it is on upgrade: it follows the latest code", async () => {
      const response = await publisher.api.post(
        configs(`${publisherConfigId}/upgrade/`, publisher.projectId),
        {},
      );
      expect([response.status, response.body.code_pinned_at]).toEqual([200, null]);
    });
  });
});

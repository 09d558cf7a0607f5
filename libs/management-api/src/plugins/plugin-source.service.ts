import { Injectable } from '@nestjs/common';
import type { Organization, User } from '@hogbase/postgres';
import { ApiError, validationError } from '../common/api.error';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { PipelineCollection } from './pipeline-collections.util';
import { assertActionAllowed, assertPluginAccess } from './plugin-access.util';
import type { PluginId } from './plugin-id.pipe';
import { downloadedAppFields, PluginInstaller } from './plugin-installer.service';
import { PIPELINE_APP_FIELDS } from './plugin.dto';
import type { PipelineAppResponse } from './plugin.presenter';
import { PluginRepository } from './plugin.repository';
import { PluginService } from './plugin.service';
import { PluginSourceFileRepository } from './plugin-source-file.repository';

const MAX_FILENAME = 200;
const MAX_SOURCE_BYTES = 1024 * 1024;

export type UpdateSourceBody = { kind: 'fields' } | { kind: 'files'; changes: Map<string, string | null> };

function quoted(names: string[]): string {
  return names.map((name) => `"${name}"`).join(', ');
}

/**
 * Tells writable fields from PostHog's `{filename: source | null}` by the keys: a file name has a
 * dot, a field name never. A body mixing both is refused rather than guessed at.
 */
export function updateSourceBody(body: unknown): UpdateSourceBody {
  const entries = Object.entries(objectBody(body));
  const fields = entries.filter(([key]) => PIPELINE_APP_FIELDS.includes(key)).map(([key]) => key);
  const neither = entries.filter(([key]) => !fields.includes(key) && !key.includes('.')).map(([key]) => key);
  if (neither.length > 0) {
    throw validationError(
      `${quoted(neither)}: neither a field of the app (${PIPELINE_APP_FIELDS.join(', ')}) nor a file name (a file name has an extension, as index.ts).`,
      neither[0],
    );
  }
  if (fields.length > 0 && fields.length < entries.length) {
    const files = entries.filter(([key]) => !fields.includes(key)).map(([key]) => key);
    throw validationError(
      `Send either the app's fields or its files, not both: got the fields ${quoted(fields)} and the files ${quoted(files)}.`,
    );
  }
  return fields.length > 0 ? { kind: 'fields' } : { kind: 'files', changes: sourceChanges(body) };
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || body === undefined || typeof body !== 'object' || Array.isArray(body)) {
    const type = Array.isArray(body)
      ? 'list'
      : body === null || body === undefined
        ? 'NoneType'
        : typeof body;
    throw new ApiError('invalid_input', `Invalid data. Expected a dictionary, but got ${type}.`);
  }
  return body as Record<string, unknown>;
}

/** Null deletes a file. Checked by hand, since its keys are free. */
export function sourceChanges(body: unknown): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  for (const [filename, source] of Object.entries(objectBody(body))) {
    // File names are keys of a flat map, never paths: nothing here may name a folder.
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(filename) || filename.length > MAX_FILENAME) {
      throw validationError(`"${filename}" is not a valid file name.`, filename);
    }
    if (source !== null && typeof source !== 'string') throw validationError('Not a valid string.', filename);
    if (typeof source === 'string' && Buffer.byteLength(source) > MAX_SOURCE_BYTES) {
      throw validationError(`Ensure this file has no more than ${MAX_SOURCE_BYTES} bytes.`, filename);
    }
    changes.set(filename, source);
  }
  return changes;
}

@Injectable()
export class PluginSourceService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly plugins: PluginService,
    private readonly pluginRows: PluginRepository,
    private readonly sourceFiles: PluginSourceFileRepository,
    private readonly installer: PluginInstaller,
  ) {}

  async source(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
  ): Promise<Record<string, string | null>> {
    assertPluginAccess(organization, false);
    const plugin = await this.plugins.find(organization, collection, id);
    assertActionAllowed(organization, plugin, 'source editing');
    const files = await this.sourceFiles.listOf(plugin.id);
    return Object.fromEntries(files.map((file) => [file.filename, file.source]));
  }

  /** Rebuilds and inspects the app; a build or load error stays visible in its file's `error`. */
  async updateSource(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
    user: User,
    changes: Map<string, string | null>,
  ): Promise<Record<string, string | null>> {
    assertPluginAccess(organization, true);
    return this.unitOfWork.run(async () => {
      const plugin = await this.plugins.find(organization, collection, id, true);
      assertActionAllowed(organization, plugin, 'source editing');
      const files = new Map(
        (await this.sourceFiles.listOf(plugin.id)).map((file) => [file.filename, file.source ?? '']),
      );
      for (const [filename, source] of changes) {
        if (source === null) files.delete(filename);
        else files.set(filename, source);
      }
      const prepared = await this.installer.prepare(Object.fromEntries(files), { defaultName: plugin.name });
      const before = await this.plugins.present(plugin);
      plugin.name = prepared.name;
      if (prepared.description !== null) plugin.description = prepared.description;
      if (prepared.icon !== null) plugin.icon = prepared.icon;
      if (files.has('plugin.json')) {
        plugin.configSchema = prepared.configSchema;
        plugin.publicJobs = prepared.publicJobs;
      }
      plugin.isStateless = prepared.isStateless;
      // Code that does not build or load keeps the capabilities of the last code that did.
      if (prepared.capabilities !== null) plugin.capabilities = prepared.capabilities;
      if (prepared.metrics !== null) plugin.metrics = prepared.metrics;
      // An entry that loads says what the app does: a body's declarations give way to it.
      if (prepared.entryLoaded) {
        plugin.declaredCapabilities = null;
        plugin.declaredMetrics = null;
      }
      plugin.updatedAt = new Date();
      await this.pluginRows.save(plugin);
      const built = new Map(prepared.files.map((file) => [file.filename, file]));
      await this.sourceFiles.replace(
        plugin.id,
        [...files].map(
          ([filename, source]) =>
            built.get(filename) ?? { filename, source, transpiled: null, status: null, error: null },
        ),
      );
      await this.plugins.recordUpdate(organization, user, plugin, before, await this.plugins.present(plugin));
      return Object.fromEntries([...files].sort(([a], [b]) => a.localeCompare(b)));
    });
  }

  /** Downloads the app again from its URL; source apps stay as they are. */
  async upgrade(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
    user: User,
  ): Promise<PipelineAppResponse> {
    assertPluginAccess(organization, true);
    const found = await this.plugins.find(organization, collection, id);
    assertActionAllowed(organization, found, 'upgrading');
    const address = found.urlWithSecrets ?? found.url;
    if (found.pluginType === 'source' || found.pluginType === 'inline' || !address) {
      return this.plugins.present(found);
    }
    // Downloaded outside the transaction: a slow remote holds no lock.
    const app = await this.installer.download(address);
    return this.unitOfWork.run(async () => {
      const plugin = await this.plugins.find(organization, collection, id, true);
      const before = await this.plugins.present(plugin);
      Object.assign(plugin, downloadedAppFields(app), { updatedAt: new Date() });
      await this.pluginRows.save(plugin);
      await this.sourceFiles.replace(plugin.id, app.files);
      const after = await this.plugins.present(plugin);
      await this.plugins.recordUpdate(organization, user, plugin, before, after);
      return after;
    });
  }

  async checkForUpdates(
    organization: Organization,
    collection: PipelineCollection,
    id: PluginId,
  ): Promise<{ plugin: PipelineAppResponse }> {
    assertPluginAccess(organization, false);
    const plugin = await this.plugins.find(organization, collection, id);
    assertActionAllowed(organization, plugin, 'installation');
    const address = plugin.urlWithSecrets ?? plugin.url;
    if (address && (plugin.pluginType === 'custom' || plugin.pluginType === 'repository')) {
      const latest = await this.installer.latestVersion(address);
      plugin.latestTag = latest;
      plugin.latestTagCheckedAt = new Date();
      // PostHog skips the reload too: a check is not an edit of the app.
      await this.pluginRows.saveLatestTag(plugin.id, latest, plugin.latestTagCheckedAt);
    }
    return { plugin: await this.plugins.present(plugin) };
  }
}

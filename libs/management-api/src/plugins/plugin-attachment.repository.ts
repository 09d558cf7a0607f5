import { In, type EntityManager } from 'typeorm';
import { PluginAttachment, type PluginConfig } from '@hogbase/postgres';
import type { ActivityChange } from '../activity/activity-log.service';
import { SECRET_MASK, type AttachmentChanges } from './plugin-config-values';

/** An attachment without its contents: what the API shows and the activity names. */
export type AttachmentSummary = Pick<
  PluginAttachment,
  'id' | 'pluginConfigId' | 'key' | 'fileName' | 'fileSize' | 'contentType'
>;

/** The attachments of these configs, never their contents (only the app's runtime reads those). */
export function attachmentsOf(manager: EntityManager, configIds: number[]): Promise<AttachmentSummary[]> {
  if (configIds.length === 0) return Promise.resolve([]);
  return manager.getRepository(PluginAttachment).find({
    select: { id: true, pluginConfigId: true, key: true, fileName: true, fileSize: true, contentType: true },
    where: { pluginConfigId: In(configIds) },
    order: { id: 'ASC' },
  });
}

/**
 * Stores the files and deletes the removed attachments of a config (already checked against its
 * schema), and answers PostHog's activities for them: attachment_created, _updated, _deleted.
 */
export async function applyAttachmentChanges(
  manager: EntityManager,
  config: PluginConfig,
  existing: AttachmentSummary[],
  changes: AttachmentChanges,
  secrets: ReadonlySet<string>,
): Promise<[string, ActivityChange[]][]> {
  const before = new Map(existing.map((attachment) => [attachment.key, attachment.fileName]));
  // A secret attachment's file name is shown masked, so its activity names none either.
  const shown = (key: string, fileName: string | undefined) =>
    fileName === undefined ? null : secrets.has(key) ? SECRET_MASK : fileName;
  const activities: [string, ActivityChange[]][] = [];
  for (const [key, upload] of changes.add) {
    await manager.query(
      `INSERT INTO plugin_attachments (plugin_config_id, team_id, key, content_type, file_name, file_size, contents)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (plugin_config_id, key) DO UPDATE SET content_type = EXCLUDED.content_type,
         file_name = EXCLUDED.file_name, file_size = EXCLUDED.file_size, contents = EXCLUDED.contents`,
      [
        config.id,
        config.teamId,
        key,
        upload.contentType,
        upload.fileName,
        upload.contents.length,
        upload.contents,
      ],
    );
    const previous = before.get(key);
    const action = previous === undefined ? 'created' : 'changed';
    activities.push([
      previous === undefined ? 'attachment_created' : 'attachment_updated',
      [
        {
          type: 'PluginConfig',
          action,
          field: key,
          before: shown(key, previous),
          after: shown(key, upload.fileName),
        },
      ],
    ]);
  }
  const removed = [...changes.remove].filter((key) => before.has(key));
  if (removed.length > 0) {
    await manager.query('DELETE FROM plugin_attachments WHERE plugin_config_id = $1 AND key = ANY($2)', [
      config.id,
      removed,
    ]);
  }
  for (const key of removed) {
    activities.push([
      'attachment_deleted',
      [
        {
          type: 'PluginConfig',
          action: 'deleted',
          field: key,
          before: shown(key, before.get(key)),
          after: null,
        },
      ],
    ]);
  }
  return activities;
}

import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { PluginAttachment, type PluginConfig } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { AttachmentUpload } from './plugin-config-values.util';

/** An attachment without its contents: what the API shows and the activity names. */
export type AttachmentSummary = Pick<
  PluginAttachment,
  'id' | 'pluginConfigId' | 'key' | 'fileName' | 'fileSize' | 'contentType'
>;

/** The files of configs' attachment fields (`plugin_attachments`). */
@Injectable()
export class PluginAttachmentRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The attachments of these configs, never their contents (only the app's runtime reads those). */
  summariesOf(configIds: number[]): Promise<AttachmentSummary[]> {
    if (configIds.length === 0) return Promise.resolve([]);
    return this.unitOfWork.repository(PluginAttachment).find({
      select: {
        id: true,
        pluginConfigId: true,
        key: true,
        fileName: true,
        fileSize: true,
        contentType: true,
      },
      where: { pluginConfigId: In(configIds) },
      order: { id: 'ASC' },
    });
  }

  /** Stores the file of `key`, replacing the one there. */
  async put(config: PluginConfig, key: string, upload: AttachmentUpload): Promise<void> {
    await this.unitOfWork.manager.query(
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
  }

  async deleteKeys(configId: number, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.unitOfWork.manager.query(
      'DELETE FROM plugin_attachments WHERE plugin_config_id = $1 AND key = ANY($2)',
      [configId, keys],
    );
  }
}

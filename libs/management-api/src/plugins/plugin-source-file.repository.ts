import { Injectable } from '@nestjs/common';
import { PluginSourceFile } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { SourceFileState } from './plugin-installer.service';

/** An app's stored files (`plugin_source_files`). */
@Injectable()
export class PluginSourceFileRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** By file name. */
  listOf(pluginId: number): Promise<PluginSourceFile[]> {
    return this.unitOfWork
      .repository(PluginSourceFile)
      .find({ where: { pluginId }, order: { filename: 'ASC' } });
  }

  /** Replaces the app's files with these. */
  async replace(pluginId: number, files: SourceFileState[]): Promise<void> {
    const repository = this.unitOfWork.repository(PluginSourceFile);
    await repository.delete({ pluginId });
    if (files.length === 0) return;
    const now = new Date();
    await repository.insert(
      files.map((file) => ({
        pluginId,
        filename: file.filename,
        source: file.source,
        transpiled: file.transpiled,
        status: file.status,
        error: file.error,
        updatedAt: now,
      })),
    );
  }
}

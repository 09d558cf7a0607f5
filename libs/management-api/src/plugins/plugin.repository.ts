import { Injectable } from '@nestjs/common';
import { In, type DeepPartial, type SelectQueryBuilder } from 'typeorm';
import { Plugin } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { collectionCondition, type PipelineCollection } from './pipeline-collections.util';

/** The apps (`plugins`): which an organization sees, and their rows. */
@Injectable()
export class PluginRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** An app the organization sees (in the collection when given); `lock` holds it for the transaction. */
  findVisible(
    organizationId: string,
    collection: PipelineCollection | null,
    id: number,
    lock = false,
  ): Promise<Plugin | null> {
    const query = this.visible(organizationId, collection).andWhere('plugin.id = :id', { id });
    if (lock) query.setLock('pessimistic_write');
    return query.getOne();
  }

  pageVisible(
    organizationId: string,
    collection: PipelineCollection,
    page: PageRequest,
  ): Promise<[Plugin[], number]> {
    return this.visible(organizationId, collection)
      .orderBy('plugin.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }

  /** Ids of the apps the organization sees that no project has enabled. */
  async unusedIds(organizationId: string): Promise<number[]> {
    const plugins = await this.visible(organizationId, null)
      .andWhere(
        'NOT EXISTS (SELECT 1 FROM plugin_configs used WHERE used.plugin_id = plugin.id AND used.enabled AND NOT used.deleted)',
      )
      .select('plugin.id')
      .orderBy('plugin.id', 'ASC')
      .getMany();
    return plugins.map((plugin) => plugin.id);
  }

  existsWithUrl(organizationId: string, url: string): Promise<boolean> {
    return this.unitOfWork.repository(Plugin).exists({ where: { organizationId, url } });
  }

  findById(id: number): Promise<Plugin> {
    return this.unitOfWork.repository(Plugin).findOneByOrFail({ id });
  }

  /** Any app, whichever organization installed it: the operator's reach. */
  findAny(id: number): Promise<Plugin | null> {
    return this.unitOfWork.repository(Plugin).findOneBy({ id });
  }

  /** Shared lock: the app's organization cannot write its code until the transaction ends. */
  findByIdLockedForRead(id: number): Promise<Plugin> {
    return this.unitOfWork
      .repository(Plugin)
      .findOneOrFail({ where: { id }, lock: { mode: 'pessimistic_read' } });
  }

  findByIds(ids: number[]): Promise<Plugin[]> {
    return this.unitOfWork.repository(Plugin).findBy({ id: In(ids) });
  }

  /** A new app, not stored yet. */
  build(fields: DeepPartial<Plugin>): Plugin {
    return this.unitOfWork.repository(Plugin).create(fields);
  }

  save(plugin: Plugin): Promise<Plugin> {
    return this.unitOfWork.repository(Plugin).save(plugin);
  }

  async delete(id: number): Promise<void> {
    await this.unitOfWork.repository(Plugin).delete({ id });
  }

  async setGlobal(id: number, isGlobal: boolean): Promise<void> {
    await this.unitOfWork.repository(Plugin).update({ id }, { isGlobal });
  }

  /** Only these two columns: an update check is not an edit of the app. */
  async saveLatestTag(id: number, latestTag: string | null, checkedAt: Date): Promise<void> {
    await this.unitOfWork.repository(Plugin).update({ id }, { latestTag, latestTagCheckedAt: checkedAt });
  }

  /** Its own apps, global apps, and apps configured in its projects. */
  private visible(organizationId: string, collection: PipelineCollection | null): SelectQueryBuilder<Plugin> {
    const query = this.unitOfWork
      .repository(Plugin)
      .createQueryBuilder('plugin')
      .where(
        `(plugin.organization_id = :organizationId OR plugin.is_global OR EXISTS (
          SELECT 1 FROM plugin_configs config JOIN teams team ON team.id = config.team_id
          WHERE config.plugin_id = plugin.id AND NOT config.deleted AND team.organization_id = :organizationId))`,
        { organizationId },
      );
    if (collection) query.andWhere(collectionCondition(collection, 'plugin'), { createdThrough: collection });
    return query;
  }
}

import { Injectable } from '@nestjs/common';
import { PluginLogEntry, type PluginConfig } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import type { LogFilter } from './plugin-config-query.dto';

/** The log lines apps write for their configs (`plugin_log_entries`). */
@Injectable()
export class PluginLogEntryRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** A page of the config's lines the filter keeps, newest first, with the count of them all. */
  pageOf(config: PluginConfig, filter: LogFilter, page: PageRequest): Promise<[PluginLogEntry[], number]> {
    const builder = this.unitOfWork
      .repository(PluginLogEntry)
      .createQueryBuilder('entry')
      .where('entry.plugin_config_id = :configId', { configId: config.id })
      .andWhere('entry.team_id = :teamId', { teamId: config.teamId });
    if (filter.types.length) builder.andWhere('entry.type IN (:...types)', { types: filter.types });
    if (filter.search) {
      builder.andWhere("entry.message ILIKE :search ESCAPE '\\'", {
        search: `%${filter.search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`,
      });
    }
    if (filter.after) builder.andWhere('entry.timestamp > :after', { after: filter.after });
    if (filter.before) builder.andWhere('entry.timestamp < :before', { before: filter.before });
    return builder
      .orderBy('entry.timestamp', 'DESC')
      .addOrderBy('entry.id', 'DESC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, type EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { intervalStart, type BatchExportInterval } from '@hogbase/batch-exports';
import { compileBatchExportQuery, HogQLError, sharedHogQLParser } from '@hogbase/hogql';
import type { ManagementConfig } from '@hogbase/config';
import { BatchExport, BatchExportRun, Team, type PersonalApiKey } from '@hogbase/postgres';
import type { ResolvedOrganization, ResolvedProject } from '../auth/access-context';
import { ApiError, notFound, validationError } from '../common/api-error';
import { isUuid } from '../common/iso.util';
import { MANAGEMENT_CONFIG } from '../management-config.token';
import type { PageRequest } from '../common/pagination.util';
import {
  destinationType,
  patchedDestinationConfig,
  type DestinationPolicy,
  validateDestinationConfig,
  validateModelDestination,
} from './batch-export-destinations';
import { BatchExportSecrets } from './batch-export-secrets.service';
import type { CreateBatchExportDto, UpdateBatchExportDto } from './batch-export.dto';
import { presentBatchExport, type BatchExportResponse } from './batch-export.presenter';

/** How many runs a batch export shows in `latest_runs` (PostHog's 10). */
const LATEST_RUNS = 10;

/**
 * A validated ISO 8601 datetime (the DTOs check the format). One without an offset is UTC, as
 * Django reads it with USE_TZ and UTC, not the server's local time as `new Date` would.
 */
function parseDatetime(value: string): Date;
function parseDatetime(value: string | null): Date | null;
function parseDatetime(value: string | null): Date | null {
  if (value === null) return null;
  return new Date(/T[\d:.]+$/.test(value) ? `${value}Z` : value);
}

/**
 * The projects a request may reach: the route's project, or every project of the route's
 * organization that the key is not scoped away from.
 */
export interface BatchExportScope {
  organizationId: string;
  teamIds: number[];
  /** Set on project routes: where a new export goes. */
  team?: Team;
}

export function projectScope({ organization, team }: ResolvedProject): BatchExportScope {
  return { organizationId: organization.id, teamIds: [team.id], team };
}

/**
 * PostHog's `schema` of an export with a HogQL query: its columns as `{expression, alias}` (the
 * workers compile them again at run time), or null for the model's default fields.
 */
async function exportSchema(hogqlQuery: string | null): Promise<Record<string, unknown> | null> {
  if (hogqlQuery === null) return null;
  try {
    const { fields } = await compileBatchExportQuery(sharedHogQLParser(), hogqlQuery);
    return { fields, values: {}, hogql_query: hogqlQuery };
  } catch (error) {
    if (error instanceof HogQLError) throw new ApiError('invalid_input', error.message, 'hogql_query');
    throw error;
  }
}

@Injectable()
export class BatchExportService {
  private readonly destinationPolicy: DestinationPolicy;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secrets: BatchExportSecrets,
    @Inject(MANAGEMENT_CONFIG) config: ManagementConfig,
  ) {
    this.destinationPolicy = { s3ServerCredentials: config.batchExportS3ServerCredentials };
  }

  /** Every project of the organization the key may read. */
  async organizationScope(
    { organization }: ResolvedOrganization,
    apiKey: PersonalApiKey,
  ): Promise<BatchExportScope> {
    const teams = await this.dataSource.getRepository(Team).find({
      select: { id: true },
      where: { organizationId: organization.id },
    });
    const scoped = apiKey.scopedTeams?.length ? new Set(apiKey.scopedTeams) : undefined;
    return {
      organizationId: organization.id,
      teamIds: teams.map((team) => team.id).filter((id) => !scoped || scoped.has(id)),
    };
  }

  async list(
    scope: BatchExportScope,
    page: PageRequest,
  ): Promise<{ count: number; results: BatchExportResponse[] }> {
    const [exports, count] = await this.dataSource.getRepository(BatchExport).findAndCount({
      where: { teamId: In(scope.teamIds), deleted: false },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
    return { count, results: await this.presentAll(exports) };
  }

  async create(
    scope: BatchExportScope,
    userId: number,
    dto: CreateBatchExportDto,
  ): Promise<BatchExportResponse> {
    const teamId = await this.targetTeam(scope, dto.team_id);
    const type = destinationType(dto.destination.type);
    const config = validateDestinationConfig(type, dto.destination.config ?? {}, this.destinationPolicy);
    validateModelDestination(dto.model ?? 'events', type, config, dto.hogql_query ?? null);
    const now = new Date();
    const { startAt, endAt } = this.range(dto.start_at ?? null, dto.end_at ?? null);
    const paused = dto.paused ?? false;
    const batchExport = this.dataSource.getRepository(BatchExport).create({
      id: uuidv7(),
      teamId,
      name: dto.name,
      model: dto.model ?? 'events',
      destinationType: type,
      destinationConfig: await this.secrets.seal(config),
      interval: dto.interval,
      paused,
      deleted: false,
      // A client's value is stored as given (PostHog's serializer); created paused, it is now.
      lastPausedAt:
        dto.last_paused_at !== undefined ? parseDatetime(dto.last_paused_at) : paused ? now : null,
      startAt,
      endAt,
      hogqlQuery: dto.hogql_query ?? null,
      schema: await exportSchema(dto.hogql_query ?? null),
      filters: dto.filters ?? null,
      // Null: the scheduler starts with the interval in progress (or the one start_at falls in).
      scheduledUntil: null,
      createdById: userId,
      createdAt: now,
      lastUpdatedAt: now,
    });
    await this.dataSource.getRepository(BatchExport).save(batchExport);
    return presentBatchExport(batchExport, config, []);
  }

  async retrieve(scope: BatchExportScope, id: string): Promise<BatchExportResponse> {
    return this.present(await this.find(this.dataSource.manager, scope, id));
  }

  async update(scope: BatchExportScope, id: string, dto: UpdateBatchExportDto): Promise<BatchExportResponse> {
    return this.dataSource.transaction(async (manager) => {
      const batchExport = await this.find(manager, scope, id, true);
      let config = await this.secrets.unseal(batchExport.destinationConfig);
      if (dto.destination) {
        const type = destinationType(dto.destination.type);
        config = patchedDestinationConfig(
          { type: batchExport.destinationType, config },
          type,
          dto.destination.config ?? {},
          this.destinationPolicy,
        );
        batchExport.destinationType = type;
        batchExport.destinationConfig = await this.secrets.seal(config);
      }
      if (dto.name !== undefined) batchExport.name = dto.name;
      if (dto.model !== undefined) batchExport.model = dto.model ?? 'events';
      if (dto.interval !== undefined && dto.interval !== batchExport.interval) {
        batchExport.interval = dto.interval;
        // A new interval starts with the interval of its own in progress.
        batchExport.scheduledUntil = null;
      }
      if (dto.start_at !== undefined || dto.end_at !== undefined) {
        const range = this.range(
          dto.start_at !== undefined ? dto.start_at : (batchExport.startAt?.toISOString() ?? null),
          dto.end_at !== undefined ? dto.end_at : (batchExport.endAt?.toISOString() ?? null),
        );
        batchExport.startAt = range.startAt;
        batchExport.endAt = range.endAt;
      }
      if (dto.hogql_query !== undefined) {
        batchExport.schema = await exportSchema(dto.hogql_query);
        batchExport.hogqlQuery = dto.hogql_query;
      }
      if (dto.filters !== undefined) batchExport.filters = dto.filters;
      validateModelDestination(
        batchExport.model,
        destinationType(batchExport.destinationType),
        config,
        batchExport.hogqlQuery,
      );
      if (dto.paused !== undefined && dto.paused !== batchExport.paused)
        this.setPaused(batchExport, dto.paused, false);
      // After the pause above: a value the client sends wins over the pause's own time, as in
      // PostHog, where the serializer stores it and only the pause action sets it to now.
      if (dto.last_paused_at !== undefined) batchExport.lastPausedAt = parseDatetime(dto.last_paused_at);
      batchExport.lastUpdatedAt = new Date();
      await manager.getRepository(BatchExport).save(batchExport);
      return presentBatchExport(
        batchExport,
        config,
        await this.latestRuns(manager, [batchExport.id]).then((runs) => runs.get(batchExport.id) ?? []),
      );
    });
  }

  /** Soft delete, as PostHog: the row stays (deleted, paused) for its runs; the API answers 404 after. */
  async remove(scope: BatchExportScope, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const batchExport = await this.find(manager, scope, id, true);
      batchExport.deleted = true;
      if (!batchExport.paused) this.setPaused(batchExport, true, false);
      batchExport.lastUpdatedAt = new Date();
      await manager.getRepository(BatchExport).save(batchExport);
    });
  }

  /**
   * Pause stops the scheduler creating runs (a run in progress finishes). Unpause resumes with the
   * interval now in progress; with `backfill`, from where it stopped, so the paused intervals run too.
   */
  async setPausedState(
    scope: BatchExportScope,
    id: string,
    paused: boolean,
    backfill = false,
  ): Promise<BatchExportResponse> {
    return this.dataSource.transaction(async (manager) => {
      const batchExport = await this.find(manager, scope, id, true);
      if (batchExport.paused !== paused) {
        this.setPaused(batchExport, paused, backfill);
        if (!paused && backfill && batchExport.scheduledUntil === null && batchExport.lastPausedAt) {
          // Paused before the scheduler ever saw it running (created paused, or paused at once):
          // the gap starts with the interval the pause fell in.
          const team = await manager.getRepository(Team).findOneByOrFail({ id: batchExport.teamId });
          batchExport.scheduledUntil = intervalStart(
            batchExport.interval as BatchExportInterval,
            team.timezone,
            batchExport.lastPausedAt,
          );
        }
        batchExport.lastUpdatedAt = new Date();
        await manager.getRepository(BatchExport).save(batchExport);
      }
      const config = await this.secrets.unseal(batchExport.destinationConfig);
      const runs = await this.latestRuns(manager, [batchExport.id]);
      return presentBatchExport(batchExport, config, runs.get(batchExport.id) ?? []);
    });
  }

  private setPaused(batchExport: BatchExport, paused: boolean, backfill: boolean): void {
    batchExport.paused = paused;
    if (paused) {
      batchExport.lastPausedAt = new Date();
    } else if (!backfill) {
      // Skips the paused intervals: the scheduler goes on with the one in progress. With
      // backfill, scheduled_until stays where the pause left it and the scheduler catches up.
      batchExport.scheduledUntil = null;
    }
  }

  private async targetTeam(scope: BatchExportScope, teamId: number | undefined): Promise<number> {
    if (scope.team) return scope.team.id;
    if (teamId !== undefined) {
      if (!scope.teamIds.includes(teamId)) {
        throw validationError(`Invalid pk "${teamId}" - object does not exist.`, 'team_id', 'does_not_exist');
      }
      return teamId;
    }
    const all = await this.dataSource
      .getRepository(Team)
      .count({ where: { organizationId: scope.organizationId } });
    if (all === 1 && scope.teamIds.length === 1) return scope.teamIds[0];
    throw validationError(
      'This organization has more than one project: name the one to export with team_id.',
      'team_id',
      'required',
    );
  }

  private range(start: string | null, end: string | null): { startAt: Date | null; endAt: Date | null } {
    const startAt = parseDatetime(start);
    const endAt = parseDatetime(end);
    if (startAt && endAt && startAt >= endAt) {
      throw validationError("The 'start_at' of a batch export must be before its 'end_at'.", 'end_at');
    }
    return { startAt, endAt };
  }

  private async find(
    manager: EntityManager,
    scope: BatchExportScope,
    id: string,
    lock = false,
  ): Promise<BatchExport> {
    // An unknown id, another organization's export and a malformed id all look the same: 404.
    if (!isUuid(id) || scope.teamIds.length === 0) throw notFound();
    const batchExport = await manager.getRepository(BatchExport).findOne({
      where: { id, teamId: In(scope.teamIds), deleted: false },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!batchExport) throw notFound();
    return batchExport;
  }

  private async present(batchExport: BatchExport): Promise<BatchExportResponse> {
    const [response] = await this.presentAll([batchExport]);
    return response;
  }

  private async presentAll(exports: BatchExport[]): Promise<BatchExportResponse[]> {
    const runs = await this.latestRuns(
      this.dataSource.manager,
      exports.map((batchExport) => batchExport.id),
    );
    return Promise.all(
      exports.map(async (batchExport) =>
        presentBatchExport(
          batchExport,
          await this.secrets.unseal(batchExport.destinationConfig),
          runs.get(batchExport.id) ?? [],
        ),
      ),
    );
  }

  /** The last 10 runs of each export, newest first, in one query. */
  private async latestRuns(manager: EntityManager, ids: string[]): Promise<Map<string, BatchExportRun[]>> {
    const byExport = new Map<string, BatchExportRun[]>();
    if (ids.length === 0) return byExport;
    const runs = await manager
      .getRepository(BatchExportRun)
      .createQueryBuilder('run')
      .where(
        `run.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY batch_export_id ORDER BY created_at DESC, id DESC) AS n
           FROM batch_export_runs WHERE batch_export_id = ANY(:ids)) ranked WHERE n <= :limit)`,
        { ids, limit: LATEST_RUNS },
      )
      .orderBy('run.created_at', 'DESC')
      .addOrderBy('run.id', 'DESC')
      .getMany();
    for (const run of runs) {
      const list = byExport.get(run.batchExportId) ?? [];
      list.push(run);
      byExport.set(run.batchExportId, list);
    }
    return byExport;
  }
}

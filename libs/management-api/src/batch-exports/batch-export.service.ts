import { Inject, Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { intervalStart, type BatchExportInterval } from '@hogbase/batch-exports';
import { compileBatchExportQuery, HogQLError, sharedHogQLParser } from '@hogbase/hogql';
import type { ManagementConfig } from '@hogbase/config';
import type { BatchExport, BatchExportRun, PersonalApiKey, Team } from '@hogbase/postgres';
import type { ResolvedOrganization, ResolvedProject } from '../auth/access.decorator';
import { ApiError, notFound, validationError } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { MANAGEMENT_CONFIG } from '../management-config.constants';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import {
  destinationType,
  patchedDestinationConfig,
  type DestinationPolicy,
  validateDestinationConfig,
  validateModelDestination,
} from './batch-export-destinations.validator';
import { BatchExportRunRepository } from './batch-export-run.repository';
import { BatchExportSecrets } from './batch-export-secrets.service';
import type { CreateBatchExportDto, UpdateBatchExportDto } from './batch-export.dto';
import { presentBatchExport, type BatchExportResponse } from './batch-export.presenter';
import { BatchExportRepository } from './batch-export.repository';

/** PostHog's `latest_runs` length. */
const LATEST_RUNS = 10;

/** A datetime without an offset is UTC, as Django reads it, not local time as `new Date` would. */
function parseDatetime(value: string): Date;
function parseDatetime(value: string | null): Date | null;
function parseDatetime(value: string | null): Date | null {
  if (value === null) return null;
  return new Date(/T[\d:.]+$/.test(value) ? `${value}Z` : value);
}

/** The route's project, or every project of the organization the key is not scoped away from. */
export interface BatchExportScope {
  organizationId: string;
  teamIds: number[];
  team?: Team;
}

export function projectScope({ organization, team }: ResolvedProject): BatchExportScope {
  return { organizationId: organization.id, teamIds: [team.id], team };
}

/** PostHog's `schema` of a HogQL export, or null for the model's default fields. */
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
    private readonly unitOfWork: UnitOfWork,
    private readonly exports: BatchExportRepository,
    private readonly projects: ProjectRepository,
    private readonly runs: BatchExportRunRepository,
    private readonly secrets: BatchExportSecrets,
    @Inject(MANAGEMENT_CONFIG) config: ManagementConfig,
  ) {
    this.destinationPolicy = { s3ServerCredentials: config.batchExportS3ServerCredentials };
  }

  async organizationScope(
    { organization }: ResolvedOrganization,
    apiKey: PersonalApiKey,
  ): Promise<BatchExportScope> {
    const teamIds = await this.projects.idsInOrganization(organization.id);
    const scoped = apiKey.scopedTeams?.length ? new Set(apiKey.scopedTeams) : undefined;
    return {
      organizationId: organization.id,
      teamIds: teamIds.filter((id) => !scoped || scoped.has(id)),
    };
  }

  async list(
    scope: BatchExportScope,
    page: PageRequest,
  ): Promise<{ count: number; results: BatchExportResponse[] }> {
    const [exports, count] = await this.exports.listLive(scope.teamIds, page);
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
    const batchExport = this.exports.create({
      id: uuidv7(),
      teamId,
      name: dto.name,
      model: dto.model ?? 'events',
      destinationType: type,
      destinationConfig: await this.secrets.seal(config),
      interval: dto.interval,
      paused,
      deleted: false,
      // Stored as the client gave it, as PostHog's serializer does.
      lastPausedAt:
        dto.last_paused_at !== undefined ? parseDatetime(dto.last_paused_at) : paused ? now : null,
      startAt,
      endAt,
      hogqlQuery: dto.hogql_query ?? null,
      schema: await exportSchema(dto.hogql_query ?? null),
      filters: dto.filters ?? null,
      scheduledUntil: null,
      createdById: userId,
      createdAt: now,
      lastUpdatedAt: now,
    });
    await this.exports.save(batchExport);
    return presentBatchExport(batchExport, config, []);
  }

  async retrieve(scope: BatchExportScope, id: string | null): Promise<BatchExportResponse> {
    return this.present(await this.find(scope, id));
  }

  async update(
    scope: BatchExportScope,
    id: string | null,
    dto: UpdateBatchExportDto,
  ): Promise<BatchExportResponse> {
    return this.unitOfWork.run(async () => {
      const batchExport = await this.find(scope, id, true);
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
      // After the pause above: the client's value wins over the pause's time, as in PostHog.
      if (dto.last_paused_at !== undefined) batchExport.lastPausedAt = parseDatetime(dto.last_paused_at);
      batchExport.lastUpdatedAt = new Date();
      await this.exports.save(batchExport);
      return presentBatchExport(batchExport, config, await this.latestRunsOf(batchExport));
    });
  }

  /** Soft delete, as PostHog: the row stays for its runs; the API answers 404 after. */
  async remove(scope: BatchExportScope, id: string): Promise<void> {
    await this.unitOfWork.run(async () => {
      const batchExport = await this.find(scope, id, true);
      batchExport.deleted = true;
      if (!batchExport.paused) this.setPaused(batchExport, true, false);
      batchExport.lastUpdatedAt = new Date();
      await this.exports.save(batchExport);
    });
  }

  /** Unpause resumes with the interval in progress, or with `backfill` from where it stopped. */
  async setPausedState(
    scope: BatchExportScope,
    id: string | null,
    paused: boolean,
    backfill = false,
  ): Promise<BatchExportResponse> {
    return this.unitOfWork.run(async () => {
      const batchExport = await this.find(scope, id, true);
      if (batchExport.paused !== paused) {
        this.setPaused(batchExport, paused, backfill);
        if (!paused && backfill && batchExport.scheduledUntil === null && batchExport.lastPausedAt) {
          // Never scheduled: the gap starts with the interval the pause fell in.
          batchExport.scheduledUntil = intervalStart(
            batchExport.interval as BatchExportInterval,
            await this.projects.timezoneOf(batchExport.teamId),
            batchExport.lastPausedAt,
          );
        }
        batchExport.lastUpdatedAt = new Date();
        await this.exports.save(batchExport);
      }
      const config = await this.secrets.unseal(batchExport.destinationConfig);
      return presentBatchExport(batchExport, config, await this.latestRunsOf(batchExport));
    });
  }

  private setPaused(batchExport: BatchExport, paused: boolean, backfill: boolean): void {
    batchExport.paused = paused;
    if (paused) {
      batchExport.lastPausedAt = new Date();
    } else if (!backfill) {
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
    const all = await this.projects.countInOrganization(scope.organizationId);
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

  /** An unknown, malformed or other organization's id is the same 404. */
  async find(scope: BatchExportScope, id: string | null, lock = false): Promise<BatchExport> {
    if (id === null || scope.teamIds.length === 0) throw notFound();
    const batchExport = await this.exports.findLive(id, scope.teamIds, lock);
    if (!batchExport) throw notFound();
    return batchExport;
  }

  private async present(batchExport: BatchExport): Promise<BatchExportResponse> {
    const [response] = await this.presentAll([batchExport]);
    return response;
  }

  private async presentAll(exports: BatchExport[]): Promise<BatchExportResponse[]> {
    const runs = await this.runs.latestOf(
      exports.map((batchExport) => batchExport.id),
      LATEST_RUNS,
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

  private async latestRunsOf(batchExport: BatchExport): Promise<BatchExportRun[]> {
    return (await this.runs.latestOf([batchExport.id], LATEST_RUNS)).get(batchExport.id) ?? [];
  }
}

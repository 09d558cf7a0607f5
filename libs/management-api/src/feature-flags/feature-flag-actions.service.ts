import { Injectable } from '@nestjs/common';
import {
  buildLocalEvaluationPayload,
  evaluateFlag,
  evaluateFlags,
  flagValue,
  type EvaluationContext,
  type FlagDefinition,
  type LocalEvaluationPayload,
} from '@hogbase/flag-evaluation';
import { FlagStore, type TeamFlags } from '@hogbase/flag-store';
import type { User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { CohortRepository } from '../cohorts/cohort.repository';
import { ApiError } from '../common/api.error';
import { iso } from '../common/iso.util';
import { EventStore } from '../events/event-store.service';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { PersonRepository, type FlagSubject } from '../persons/person.repository';
import type { MyFlagResponse, StaticCohortResponse } from './feature-flag-actions.presenter';
import { presentMinimalFlag } from './feature-flag.presenter';
import { FeatureFlagService } from './feature-flag.service';
import { FlagPermissionsService } from './flag-permissions.service';
import { UsageDashboardService } from './usage-dashboard.service';

const SUBJECT_BATCH = 5_000;

export interface FlagEvaluationQuery {
  distinct_id?: string;
  /** As sent: checked (400 on `groups`) only once the request is otherwise complete. */
  groups?: unknown;
}

export type DashboardOutcome = { success: true } | { success: false; error: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON object of group type → key. */
function groupsParam(raw: unknown): Record<string, string | number> {
  if (raw === undefined || raw === '') return {};
  try {
    if (typeof raw !== 'string') throw new TypeError('groups given more than once');
    const parsed: unknown = JSON.parse(raw);
    if (isRecord(parsed)) {
      return Object.fromEntries(
        Object.entries(parsed).filter(
          (entry): entry is [string, string | number] =>
            typeof entry[1] === 'string' || typeof entry[1] === 'number',
        ),
      );
    }
  } catch {
    // Reported below.
  }
  throw new ApiError('invalid', 'groups must be a JSON object of group type to group key', 'groups');
}

/** The flag actions that evaluate flags (`posthog/api/feature_flag.py`), over the project's Postgres data. */
@Injectable()
export class FeatureFlagActionsService {
  private readonly store: FlagStore;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly flags: FeatureFlagService,
    private readonly cohorts: CohortRepository,
    private readonly persons: PersonRepository,
    private readonly permissions: FlagPermissionsService,
    private readonly dashboards: UsageDashboardService,
    private readonly events: EventStore,
  ) {
    this.store = new FlagStore({
      query: async <T>(text: string, values?: unknown[]) => ({
        rows: await unitOfWork.manager.query<T[]>(text, values),
      }),
    });
  }

  async localEvaluation({ team }: ResolvedProject, sendCohorts: boolean): Promise<LocalEvaluationPayload> {
    const definitions = await this.store.teamFlags(team.id);
    return buildLocalEvaluationPayload({
      flags: definitions.flags,
      groupTypeMapping: definitions.groupTypeMapping,
      cohorts: sendCohorts ? definitions.cohorts : [],
    });
  }

  async evaluationReasons(
    { team }: ResolvedProject,
    query: FlagEvaluationQuery,
  ): Promise<
    Record<
      string,
      { value: string | boolean; evaluation: { reason: string; condition_index: number | null } }
    >
  > {
    const distinctId = query.distinct_id ?? '';
    if (distinctId === '') throw new ApiError('invalid', 'distinct_id is required');
    const definitions = await this.store.teamFlags(team.id);
    const context = await this.store.contextFor(definitions, {
      distinctId,
      groups: groupsParam(query.groups),
    });
    const results = evaluateFlags(definitions.flags, context, { includeInactive: true });
    return Object.fromEntries(
      Object.entries(results).map(([key, result]) => [
        key,
        {
          value: flagValue(result),
          evaluation: {
            // PostHog's evaluation_reasons names an inactive flag "disabled".
            reason: result.reason.code === 'flag_disabled' ? 'disabled' : result.reason.code,
            condition_index: result.reason.condition_index,
          },
        },
      ]),
    );
  }

  /** Every live flag's value for the key's user (its distinct id), newest flag first. */
  async myFlags(user: User, project: ResolvedProject, query: FlagEvaluationQuery): Promise<MyFlagResponse[]> {
    const definitions = await this.store.teamFlags(project.team.id);
    if (definitions.flags.length === 0) return [];
    const context = await this.store.contextFor(definitions, {
      distinctId: user.distinctId,
      groups: groupsParam(query.groups),
    });
    const results = evaluateFlags(definitions.flags, context, { includeInactive: true });
    const entities = await this.flags.liveFlags(project);
    return entities.map((flag) => ({
      feature_flag: presentMinimalFlag(flag),
      value: results[flag.key] ? flagValue(results[flag.key]) : false,
    }));
  }

  async userBlastRadius(
    { team }: ResolvedProject,
    body: unknown,
  ): Promise<{ users_affected: number; total_users: number }> {
    if (!isRecord(body) || !('condition' in body)) {
      throw new ApiError('invalid', 'Missing condition for which to get blast radius');
    }
    const { condition } = body;
    if (!isRecord(condition)) throw new ApiError('invalid', 'condition must be an object', 'condition');
    const groupTypeIndex = body.group_type_index;
    if (
      groupTypeIndex !== undefined &&
      groupTypeIndex !== null &&
      !(
        Number.isInteger(groupTypeIndex) &&
        (groupTypeIndex as number) >= 0 &&
        (groupTypeIndex as number) <= 4
      )
    ) {
      throw new ApiError('invalid', 'group_type_index must be 0 to 4', 'group_type_index');
    }
    const definitions = await this.store.teamFlags(team.id);
    const flag: FlagDefinition = {
      id: 0,
      key: 'blast-radius',
      active: true,
      deleted: false,
      filters: {
        groups: [condition],
        aggregation_group_type_index: typeof groupTypeIndex === 'number' ? groupTypeIndex : null,
      },
    };
    let affected = 0;
    let total = 0;
    await this.forEachSubject(
      definitions,
      typeof groupTypeIndex === 'number' ? groupTypeIndex : null,
      (context) => {
        total += 1;
        if (evaluateFlag(flag, context).enabled) affected += 1;
      },
    );
    return { users_affected: affected, total_users: total };
  }

  /**
   * A static cohort of the persons the flag matches now. PostHog fills it in the background; here
   * it is filled before answering, so the cohort is usable in flag filters at once.
   */
  async createStaticCohort(user: User, project: ResolvedProject, id: number): Promise<StaticCohortResponse> {
    const entity = await this.flags.find(project, id);
    const definitions = await this.store.teamFlags(project.team.id);
    const flag = definitions.flags.find((candidate) => candidate.id === entity.id) ?? {
      id: entity.id,
      key: entity.key,
      active: entity.active,
      deleted: entity.deleted,
      filters: entity.filters,
    };
    const members: string[] = [];
    await this.forEachSubject(definitions, null, (context, subject) => {
      if (evaluateFlag(flag, context).enabled) members.push(subject.id);
    });
    const now = new Date();
    const stamp = now.toISOString().slice(0, 19).replace('T', ' ');
    const cohort = await this.unitOfWork.run(async () => {
      const created = await this.cohorts.insert({
        teamId: project.team.id,
        name: `Users with feature flag ${entity.key} enabled at ${stamp}`,
        isStatic: true,
        isCalculating: false,
        count: members.length,
        lastCalculation: now,
        createdById: user.id,
      });
      await this.cohorts.addPersons(created.id, members);
      return created;
    });
    return {
      cohort: {
        id: cohort.id,
        name: cohort.name,
        description: cohort.description,
        groups: [],
        filters: cohort.filters,
        deleted: cohort.deleted,
        is_calculating: cohort.isCalculating,
        is_static: cohort.isStatic,
        count: cohort.count,
        last_calculation: iso(cohort.lastCalculation),
        created_by: { id: user.id, uuid: user.uuid, email: user.email, first_name: user.firstName },
        created_at: iso(cohort.createdAt),
      },
    };
  }

  async dashboard(user: User, project: ResolvedProject, id: number): Promise<DashboardOutcome> {
    const flag = await this.editable(user, project, id);
    try {
      await this.dashboards.ensure(flag);
      return { success: true };
    } catch {
      return { success: false, error: 'Unable to generate usage dashboard' };
    }
  }

  /** Enriched analytics exist once the flag's feature reported `$feature_view` / `$feature_interaction` events. */
  async enrichUsageDashboard(user: User, project: ResolvedProject, id: number): Promise<DashboardOutcome> {
    const flag = await this.editable(user, project, id);
    const [row] = await this.events.select<{ found: number | string }>(
      `SELECT count() > 0 AS found FROM ${this.events.table}
        WHERE team_id = {team_id:Int64} AND event IN ('$feature_view', '$feature_interaction')
          AND JSONExtractString(properties, 'feature_flag') = {key:String}`,
      { team_id: project.team.id, key: flag.key },
    );
    if (!row || Number(row.found) === 0) {
      return { success: false, error: 'No enriched analytics available for this feature flag' };
    }
    try {
      return await this.dashboards.enrich(flag);
    } catch {
      return { success: false, error: 'Unable to enrich usage dashboard' };
    }
  }

  private async editable(user: User, project: ResolvedProject, id: number) {
    const flag = await this.flags.find(project, id);
    await this.flags.requireEdit(await this.permissions.rightsOf(user, project), flag);
    return flag;
  }

  private async forEachSubject(
    definitions: TeamFlags,
    groupTypeIndex: number | null,
    visit: (context: EvaluationContext, subject: FlagSubject) => void,
  ): Promise<void> {
    const cohorts = Object.fromEntries(definitions.cohorts.map((cohort) => [String(cohort.id), cohort]));
    const groupType =
      groupTypeIndex === null ? undefined : definitions.groupTypeMapping[String(groupTypeIndex)];
    if (groupTypeIndex !== null && groupType === undefined) return;
    let after = '0';
    for (;;) {
      const subjects =
        groupTypeIndex === null
          ? await this.persons.personsAfter(definitions.teamId, after, SUBJECT_BATCH)
          : await this.persons.groupsAfter(definitions.teamId, groupTypeIndex, after, SUBJECT_BATCH);
      if (subjects.length === 0) return;
      const memberships =
        groupTypeIndex === null
          ? await this.cohorts.staticMemberships(subjects.map((subject) => subject.id))
          : new Map<string, Set<number>>();
      for (const subject of subjects) {
        const staticCohorts = memberships.get(subject.id);
        const context: EvaluationContext =
          groupType === undefined
            ? {
                distinctId: subject.distinctId ?? subject.id,
                personProperties: subject.properties,
                groupTypeMapping: definitions.groupTypeMapping,
                cohorts,
                isInStaticCohort: (cohortId) => staticCohorts?.has(cohortId) ?? false,
                timezone: definitions.timezone,
              }
            : {
                distinctId: subject.distinctId,
                groups: { [groupType]: subject.distinctId },
                groupProperties: { [groupType]: subject.properties },
                groupTypeMapping: definitions.groupTypeMapping,
                cohorts,
                timezone: definitions.timezone,
              };
        visit(context, subject);
      }
      after = subjects[subjects.length - 1].id;
    }
  }
}

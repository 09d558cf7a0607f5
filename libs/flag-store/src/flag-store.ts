import type {
  CohortDefinition,
  CohortPropertyGroup,
  EvaluationContext,
  FlagDefinition,
  FlagFilters,
  Properties,
} from '@hogbase/flag-evaluation';

/** What both `pg.Pool` and a TypeORM DataSource adapter offer: a parameterised query. */
export interface SqlClient {
  query<T>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
}

/** A project's flag definitions and what evaluating them needs besides a person. */
export interface TeamFlags {
  teamId: number;
  /** Every non-deleted flag, active or not. */
  flags: FlagDefinition[];
  /** Group type index (as text) → group type name. */
  groupTypeMapping: Record<string, string>;
  /** The project's non-deleted cohorts. */
  cohorts: CohortDefinition[];
  timezone: string;
}

/** What a request says about the one it evaluates flags for (SDK body or API query). */
export interface EvaluationSubject {
  distinctId: string;
  /** Group type name → key. */
  groups?: Record<string, string | number>;
  /** Sent by the SDK: they override what is stored. */
  personProperties?: Properties;
  groupProperties?: Record<string, Properties>;
  /** The anonymous id of a just-identified person (experience continuity). */
  anonDistinctId?: string | null;
  deviceId?: string | null;
}

interface FlagRow {
  id: number;
  key: string;
  name: string;
  active: boolean;
  filters: FlagFilters & { properties?: unknown };
  rollout_percentage: number | null;
  ensure_experience_continuity: boolean;
  version: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A legacy row's filters (no `groups`) as one condition, as PostHog's get_filters() reads them. */
export function flagFiltersOf(
  filters: FlagFilters & { properties?: unknown },
  legacyRollout: number | null,
): FlagFilters {
  if (isRecord(filters) && 'groups' in filters) return filters;
  const properties = Array.isArray(filters?.properties) ? (filters.properties as FlagFilters['groups']) : [];
  return { ...filters, groups: [{ properties: properties as never, rollout_percentage: legacyRollout }] };
}

/** A cohort's filters as the evaluator reads them: `{properties: {type, values}}`. */
function cohortProperties(filters: unknown): CohortPropertyGroup | null {
  if (!isRecord(filters) || !isRecord(filters.properties)) return null;
  return filters.properties as unknown as CohortPropertyGroup;
}

/**
 * Reads what flag evaluation needs from Postgres with plain SQL, every query bound to one project:
 * the management API (through its DataSource) and capture (through its pool) share it.
 */
export class FlagStore {
  constructor(private readonly sql: SqlClient) {}

  async teamFlags(teamId: number): Promise<TeamFlags> {
    const [flags, mappings, cohorts, teams] = await Promise.all([
      this.sql.query<FlagRow>(
        `SELECT id, key, name, active, filters, rollout_percentage, ensure_experience_continuity, version
           FROM feature_flags WHERE team_id = $1 AND NOT deleted ORDER BY created_at DESC, id DESC`,
        [teamId],
      ),
      this.sql.query<{ group_type: string; group_type_index: number }>(
        `SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1`,
        [teamId],
      ),
      this.sql.query<{ id: number; is_static: boolean; filters: unknown }>(
        `SELECT id, is_static, filters FROM cohorts WHERE team_id = $1 AND NOT deleted`,
        [teamId],
      ),
      this.sql.query<{ timezone: string }>(`SELECT timezone FROM teams WHERE id = $1`, [teamId]),
    ]);
    return {
      teamId,
      flags: flags.rows.map((row) => ({
        id: row.id,
        key: row.key,
        name: row.name,
        active: row.active,
        deleted: false,
        filters: flagFiltersOf(row.filters, row.rollout_percentage),
        ensure_experience_continuity: row.ensure_experience_continuity,
        version: row.version,
        team_id: teamId,
      })),
      groupTypeMapping: Object.fromEntries(
        mappings.rows.map((row) => [String(row.group_type_index), row.group_type]),
      ),
      cohorts: cohorts.rows.map((row) => ({
        id: row.id,
        is_static: row.is_static,
        properties: cohortProperties(row.filters),
      })),
      timezone: teams.rows[0]?.timezone ?? 'UTC',
    };
  }

  /**
   * The evaluation context of one subject: the person's stored properties (overridden by what the
   * request sent), its static cohorts and hash-key overrides, and the properties of its groups.
   */
  async contextFor(team: TeamFlags, subject: EvaluationSubject): Promise<EvaluationContext> {
    const person = await this.person(team.teamId, subject.distinctId);
    const groups = subject.groups ?? {};
    const [staticCohorts, overrides, groupProperties] = await Promise.all([
      person && team.cohorts.some((cohort) => cohort.is_static)
        ? this.staticCohortsOf(person.id)
        : Promise.resolve(new Set<number>()),
      person && team.flags.some((flag) => flag.ensure_experience_continuity)
        ? this.hashKeyOverridesOf(team.teamId, person.id)
        : Promise.resolve({}),
      this.groupPropertiesOf(team, groups),
    ]);
    for (const [type, properties] of Object.entries(subject.groupProperties ?? {})) {
      groupProperties[type] = { ...groupProperties[type], ...properties };
    }
    return {
      distinctId: subject.distinctId,
      personProperties: { ...(person?.properties ?? {}), ...(subject.personProperties ?? {}) },
      groups,
      groupProperties,
      groupTypeMapping: team.groupTypeMapping,
      cohorts: Object.fromEntries(team.cohorts.map((cohort) => [String(cohort.id), cohort])),
      isInStaticCohort: (cohortId) => staticCohorts.has(cohortId),
      hashKeyOverrides: overrides,
      anonDistinctId: subject.anonDistinctId ?? null,
      deviceId: subject.deviceId ?? null,
      timezone: team.timezone,
    };
  }

  /**
   * Experience continuity: when an identified person is seen with its anonymous id, the flags that
   * keep their variant across identify hash on that anonymous id from now on. Existing overrides
   * stay (the first anonymous id wins), as in PostHog.
   */
  async recordHashKeyOverrides(team: TeamFlags, distinctId: string, hashKey: string): Promise<void> {
    const keys = team.flags
      .filter((flag) => flag.ensure_experience_continuity && flag.active)
      .map((flag) => flag.key);
    if (keys.length === 0) return;
    await this.sql.query(
      `INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
       SELECT pdi.team_id, pdi.person_id, key, $3
         FROM person_distinct_ids pdi CROSS JOIN unnest($4::text[]) AS key
        WHERE pdi.team_id = $1 AND pdi.distinct_id = ANY($2::text[])
       ON CONFLICT DO NOTHING`,
      [team.teamId, [distinctId, hashKey], hashKey, keys],
    );
  }

  private async person(
    teamId: number,
    distinctId: string,
  ): Promise<{ id: string; properties: Record<string, unknown> } | undefined> {
    const { rows } = await this.sql.query<{ id: string; properties: Record<string, unknown> }>(
      `SELECT p.id, p.properties FROM person_distinct_ids pdi JOIN persons p ON p.id = pdi.person_id
        WHERE pdi.team_id = $1 AND pdi.distinct_id = $2`,
      [teamId, distinctId],
    );
    return rows[0];
  }

  private async staticCohortsOf(personId: string): Promise<Set<number>> {
    const { rows } = await this.sql.query<{ cohort_id: number }>(
      `SELECT cohort_id FROM cohort_people WHERE person_id = $1`,
      [personId],
    );
    return new Set(rows.map((row) => row.cohort_id));
  }

  private async hashKeyOverridesOf(teamId: number, personId: string): Promise<Record<string, string>> {
    const { rows } = await this.sql.query<{ feature_flag_key: string; hash_key: string }>(
      `SELECT feature_flag_key, hash_key FROM feature_flag_hash_key_overrides WHERE team_id = $1 AND person_id = $2`,
      [teamId, personId],
    );
    return Object.fromEntries(rows.map((row) => [row.feature_flag_key, row.hash_key]));
  }

  private async groupPropertiesOf(
    team: TeamFlags,
    groups: Record<string, string | number>,
  ): Promise<Record<string, Record<string, unknown>>> {
    const indexByType = new Map(
      Object.entries(team.groupTypeMapping).map(([index, type]) => [type, Number(index)]),
    );
    const wanted = Object.entries(groups).filter(([type]) => indexByType.has(type));
    if (wanted.length === 0) return {};
    const { rows } = await this.sql.query<{
      group_type_index: number;
      group_key: string;
      group_properties: Record<string, unknown>;
    }>(
      `SELECT group_type_index, group_key, group_properties FROM groups
        WHERE team_id = $1 AND (group_type_index, group_key) IN (SELECT * FROM unnest($2::smallint[], $3::text[]))`,
      [team.teamId, wanted.map(([type]) => indexByType.get(type)), wanted.map(([, key]) => String(key))],
    );
    const result: Record<string, Record<string, unknown>> = {};
    for (const [type, key] of wanted) {
      const row = rows.find(
        (candidate) =>
          candidate.group_type_index === indexByType.get(type) && candidate.group_key === String(key),
      );
      result[type] = row?.group_properties ?? {};
    }
    return result;
  }
}

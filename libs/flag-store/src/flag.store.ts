import type {
  CohortDefinition,
  CohortPropertyGroup,
  EvaluationContext,
  FlagDefinition,
  FlagFilters,
  Properties,
} from '@hogbase/flag-evaluation';
import type { Pool, QueryResultRow } from 'pg';

/** What both `pg.Pool` and a TypeORM DataSource adapter offer: a parameterised query. */
export interface SqlClient {
  query<T>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  /** Optional: a named statement, planned once per connection (planning costs more than the read). */
  queryNamed?<T>(statement: { name: string; text: string; values: unknown[] }): Promise<{ rows: T[] }>;
}

/** NOTE: behind PgBouncer in transaction mode, needs 1.21+ with `max_prepared_statements` (README). */
export function pgSqlClient(pg: Pick<Pool, 'query'>): SqlClient {
  return {
    query: <T>(text: string, values?: unknown[]) => pg.query<T & QueryResultRow>(text, values),
    queryNamed: <T>(statement: { name: string; text: string; values: unknown[] }) =>
      pg.query<T & QueryResultRow>(statement),
  };
}

export interface TeamFlags {
  teamId: number;
  /** Every non-deleted flag, active or not. */
  flags: FlagDefinition[];
  /** Group type index (as text) → group type name. */
  groupTypeMapping: Record<string, string>;
  cohorts: CohortDefinition[];
  timezone: string;
}

/** What a request says about the one it evaluates flags for (SDK body or API query). */
export interface EvaluationSubject {
  distinctId: string;
  /** Group type name → key. */
  groups?: Record<string, string | number>;
  /** They override what is stored. */
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

/** A legacy row (no `groups`) as one condition, as `get_filters()` of `posthog/models/feature_flag/feature_flag.py`. */
export function flagFiltersOf(
  filters: FlagFilters & { properties?: unknown },
  legacyRollout: number | null,
): FlagFilters {
  if (isRecord(filters) && 'groups' in filters) return filters;
  const properties = Array.isArray(filters?.properties) ? (filters.properties as FlagFilters['groups']) : [];
  return { ...filters, groups: [{ properties: properties as never, rollout_percentage: legacyRollout }] };
}

function cohortProperties(filters: unknown): CohortPropertyGroup | null {
  if (!isRecord(filters) || !isRecord(filters.properties)) return null;
  return filters.properties as unknown as CohortPropertyGroup;
}

/** Also returned without a person: then its person columns are null. */
interface ContextRow {
  properties: Record<string, unknown> | null;
  static_cohort_ids: number[] | null;
  hash_key_overrides: Record<string, string> | null;
  /** `[group_type_index, group_key, group_properties]` */
  groups: [number, string, Record<string, unknown>][] | null;
}

/** $3/$4 say whether the project has static cohorts and continuity flags: else those reads are skipped. */
const CONTEXT_QUERY = `
  SELECT person.properties,
         CASE WHEN $3::boolean THEN ARRAY(SELECT cohort_id FROM cohort_people WHERE person_id = person.id) END
           AS static_cohort_ids,
         CASE WHEN $4::boolean THEN (
           SELECT json_object_agg(feature_flag_key, hash_key) FROM feature_flag_hash_key_overrides
            WHERE team_id = $1 AND person_id = person.id) END AS hash_key_overrides,
         (SELECT json_agg(json_build_array(g.group_type_index, g.group_key, g.group_properties)) FROM groups g
           WHERE g.team_id = $1
             AND (g.group_type_index, g.group_key) IN (SELECT * FROM unnest($5::smallint[], $6::text[])))
           AS groups
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT p.id, p.properties FROM person_distinct_ids pdi JOIN persons p ON p.id = pdi.person_id
       WHERE pdi.team_id = $1 AND pdi.distinct_id = $2) AS person ON true`;

function groupIndexByType(team: TeamFlags): Map<string, number> {
  return new Map(Object.entries(team.groupTypeMapping).map(([index, type]) => [type, Number(index)]));
}

/** Plain SQL, every query bound to one project: shared by the management API and capture. */
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

  /** One query for all the person's context (`/flags` pays it on every SDK call); the request's values win. */
  async contextFor(team: TeamFlags, subject: EvaluationSubject): Promise<EvaluationContext> {
    const groups = subject.groups ?? {};
    const indexByType = groupIndexByType(team);
    const wanted = Object.entries(groups).filter(([type]) => indexByType.has(type));
    const values = [
      team.teamId,
      subject.distinctId,
      team.cohorts.some((cohort) => cohort.is_static),
      team.flags.some((flag) => flag.ensure_experience_continuity),
      wanted.map(([type]) => indexByType.get(type)),
      wanted.map(([, key]) => String(key)),
    ];
    const {
      rows: [row],
    } = this.sql.queryNamed
      ? await this.sql.queryNamed<ContextRow>({ name: 'flag-store-context', text: CONTEXT_QUERY, values })
      : await this.sql.query<ContextRow>(CONTEXT_QUERY, values);
    const staticCohorts = new Set(row?.static_cohort_ids ?? []);
    const groupProperties: Record<string, Record<string, unknown>> = {};
    for (const [type, key] of wanted) {
      const found = row?.groups?.find(
        ([index, groupKey]) => index === indexByType.get(type) && groupKey === String(key),
      );
      groupProperties[type] = found?.[2] ?? {};
    }
    for (const [type, properties] of Object.entries(subject.groupProperties ?? {})) {
      groupProperties[type] = { ...groupProperties[type], ...properties };
    }
    return {
      distinctId: subject.distinctId,
      personProperties: { ...(row?.properties ?? {}), ...(subject.personProperties ?? {}) },
      groups,
      groupProperties,
      groupTypeMapping: team.groupTypeMapping,
      cohorts: Object.fromEntries(team.cohorts.map((cohort) => [String(cohort.id), cohort])),
      isInStaticCohort: (cohortId) => staticCohorts.has(cohortId),
      hashKeyOverrides: row?.hash_key_overrides ?? {},
      anonDistinctId: subject.anonDistinctId ?? null,
      deviceId: subject.deviceId ?? null,
      timezone: team.timezone,
    };
  }

  /** Continuity flags hash on the first anonymous id, as `posthog/models/feature_flag/flag_matching.py`. */
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
}

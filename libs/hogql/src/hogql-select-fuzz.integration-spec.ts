import { hogqlErrorFromClickHouse } from './clickhouse-error.util';
import { closeSharedHogQLParser } from './hogql-parser.util';
import { HogQLError } from './hogql.errors';
import { HogQLStatementCompiler } from './hogql-select.util';
import { EVENTS_TABLE } from './hogql-tables.util';
import { QueryParams } from './query-params.util';
import { seededRandom } from './testing/expression-generator.util';
import { sqlVocabularyViolations } from './testing/sql-vocabulary.util';
import { generateStatement } from './testing/statement-generator.util';
import { createTestEventsTable, type TestEventsTable } from './testing/test-events-table.util';

/**
 * Generated and hostile statements, compiled and run on chDB: each is refused with a HogQLError, or
 * compiles to SQL of the fixed vocabulary in which every table is read through its project guard,
 * and runs to an answer holding nothing of the other project (or to an error the user's query
 * caused, which the API answers as a 400). Anything else would be a 500 or a leak.
 */
const TEAM = 7;
const ROUNDS = 400;
const MARKER = 'other-project-fuzz-marker';
const compiler = new HogQLStatementCompiler();
let events: TestEventsTable;
let database: string;

beforeAll(async () => {
  events = await createTestEventsTable({ replacing: true });
  database = events.table.split('.')[0];
  const rows = [];
  for (let n = 0; n < 30; n += 1) {
    for (const [team, marker] of [
      [TEAM, null],
      [TEAM + 1, MARKER],
    ] as const) {
      rows.push({
        uuid: `00000000-0000-4000-8000-${String(team * 1000 + n).padStart(12, '0')}`,
        event: marker ?? ['$pageview', 'signup', 'purchase'][n % 3],
        distinct_id: marker ? `${marker}-${n % 4}` : `user-${n % 4}`,
        team_id: team,
        properties: { $browser: marker ?? 'Chrome', price: n, marker, nested: { a: { b: marker ?? n } } },
        person_properties: { email: marker ? `${marker}@x.com` : 'own@x.com' },
        elements_chain: marker ?? '',
      });
    }
  }
  await events.insert(rows);
});

afterAll(async () => {
  await events?.drop();
  await closeSharedHogQLParser();
});

it(`keeps ${ROUNDS} generated statements inside the project, as a HogQLError or an answer`, async () => {
  const random = seededRandom(31_2026);
  const problems: string[] = [];
  let refused = 0;
  let answered = 0;
  let userErrors = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const text = generateStatement(random);
    const params = new QueryParams();
    let compiled;
    try {
      compiled = await compiler.compile(text, {
        database,
        teamId: TEAM,
        params,
        defaultLimit: 1000,
        maxLimit: 1000,
      });
    } catch (error) {
      if (error instanceof HogQLError) {
        refused += 1;
        continue;
      }
      problems.push(`${text}\n  compile threw ${String(error)}`);
      continue;
    }
    // Every table read is the guarded source with this project's id; nothing else may name team_id.
    const source = `(${EVENTS_TABLE.source(database, '{p0:Int64}')})`;
    const unguarded = compiled.sql.split(source).join('(events)');
    const violations = sqlVocabularyViolations(unguarded, params.values, { statement: { database } });
    if (params.values.p0 !== TEAM) violations.push(`p0 is ${String(params.values.p0)}`);
    if (violations.length > 0) problems.push(`${text}\n  ${compiled.sql}\n  ${violations.join('; ')}`);
    try {
      const result = await events.client.query({
        query: compiled.sql,
        query_params: params.values,
        format: 'JSONCompactEachRow',
        clickhouse_settings: { max_execution_time: 20, max_result_rows: '100000' },
      });
      const text = await result.text();
      if (text.includes(MARKER)) problems.push(`${text.slice(0, 200)}\n  leaked the other project`);
      answered += 1;
    } catch (error) {
      if (hogqlErrorFromClickHouse(error)) userErrors += 1;
      else problems.push(`${text}\n  ${compiled.sql}\n  ClickHouse: ${String(error).slice(0, 300)}`);
    }
  }
  expect(problems).toEqual([]);
  // The generator is worth its time only if both outcomes happen often.
  expect(refused).toBeGreaterThan(ROUNDS / 10);
  expect(answered).toBeGreaterThan(ROUNDS / 5);
  expect(refused + answered + userErrors).toBe(ROUNDS);
}, 300_000);

import { HogQLCompiler } from './hogql-compiler.util';
import { HogQLError } from './hogql.errors';
import { closeSharedHogQLParser } from './hogql-parser.util';
import { compilePropertyFilters } from './property-filter.util';
import { QueryParams } from './query-params.util';
import {
  generateExpression,
  generateHostileExpression,
  generatePropertyFilter,
  seededRandom,
} from './testing/expression-generator.util';
import { sqlVocabularyViolations } from './testing/sql-vocabulary.util';

/**
 * 2,000 generated inputs, half of them hostile (injection attempts, stray quotes and comments,
 * team_id, subqueries, odd Unicode): each is refused with a HogQLError, or compiles to SQL made
 * only of the fixed vocabulary, with every value a bound parameter.
 */
const compiler = new HogQLCompiler();
const NOW = new Date('2024-02-10T00:00:00Z');

afterAll(async () => {
  await closeSharedHogQLParser();
});

interface Outcome {
  compiled: number;
  refused: number;
  problems: string[];
}

function checkSql(input: unknown, sql: string, params: QueryParams, outcome: Outcome): void {
  const violations = sqlVocabularyViolations(sql, params.values);
  if (sql.includes('team_id')) violations.push('mentions team_id');
  if (violations.length > 0) {
    outcome.problems.push(`${JSON.stringify(input)}\n  ${sql}\n  ${violations.join('; ')}`);
  }
}

function record(input: unknown, error: unknown, outcome: Outcome): void {
  if (error instanceof HogQLError) {
    outcome.refused += 1;
    if (!error.attr) outcome.problems.push(`${JSON.stringify(input)}: HogQLError without attr`);
    return;
  }
  outcome.problems.push(`${JSON.stringify(input)}: ${String(error)}`);
}

describe('fuzzing the compilers', () => {
  it('refuses or safely compiles 1,000 generated and hostile select/where expressions', async () => {
    const random = seededRandom(424242);
    const outcome: Outcome = { compiled: 0, refused: 0, problems: [] };
    for (let index = 0; index < 1_000; index += 1) {
      const expressions = Array.from({ length: random() < 0.9 ? 1 : 2 }, () =>
        random() < 0.5 ? generateHostileExpression(random) : generateExpression(random),
      );
      const params = new QueryParams();
      try {
        if (random() < 0.5) {
          const select = await compiler.compileSelect(expressions, params);
          for (const column of select.columns) checkSql(expressions, column.sql, params, outcome);
        } else {
          const where = await compiler.compileWhere(expressions, params);
          checkSql(expressions, where.sql ?? '', params, outcome);
        }
        outcome.compiled += 1;
      } catch (error) {
        record(expressions, error, outcome);
      }
    }
    expect(outcome.problems).toEqual([]);
    // Both paths were exercised, so the checks above checked something.
    expect(outcome.compiled).toBeGreaterThan(100);
    expect(outcome.refused).toBeGreaterThan(300);
  });

  it('refuses or safely compiles 1,000 generated and hostile property filters', async () => {
    const random = seededRandom(99);
    const outcome: Outcome = { compiled: 0, refused: 0, problems: [] };
    for (let index = 0; index < 1_000; index += 1) {
      const filters = generatePropertyFilter(random);
      const params = new QueryParams();
      try {
        const sql = await compilePropertyFilters(filters, params, { now: NOW, compiler });
        checkSql(filters, sql ?? '', params, outcome);
        outcome.compiled += 1;
      } catch (error) {
        record(filters, error, outcome);
      }
    }
    expect(outcome.problems).toEqual([]);
    expect(outcome.compiled).toBeGreaterThan(200);
    expect(outcome.refused).toBeGreaterThan(200);
  });

  it('catches a value that leaks into the SQL text', () => {
    // The check itself must be able to fail.
    expect(sqlVocabularyViolations("equals(event, 'x')", {})).toEqual(["literal 'x'"]);
    expect(sqlVocabularyViolations('equals(team_id, {p0:Int64})', { p0: 2 })).toEqual(['word team_id']);
    expect(sqlVocabularyViolations('equals(event, {p0:String})', { p0: 1 })).toEqual([
      '{p0:String} bound to 1',
    ]);
    expect(sqlVocabularyViolations('equals(event, {p0:String}); DROP', { p0: 'a' })).toEqual([
      'character ";"',
      'word DROP',
    ]);
  });
});

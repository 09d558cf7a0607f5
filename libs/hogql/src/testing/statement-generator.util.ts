import {
  generateExpression,
  generateHostileExpression,
  pick,
  type Random,
} from './expression-generator.util';

/** Whole HogQL statements for fuzz tests: valid shapes, odd combinations and attacks. Test-only. */

const AGGREGATES = [
  'count()',
  'uniq(distinct_id)',
  'min(timestamp)',
  'max(properties.price)',
  "countIf(event = 'signup')",
];

const HOSTILE_STATEMENTS = [
  'select * from system.tables',
  'select * from system.one',
  'select * from numbers(10)',
  "select * from url('http://127.0.0.1:1/x', 'CSV', 'a String')",
  "select * from file('/etc/passwd', 'CSV', 'a String')",
  "select * from remote('127.0.0.1', 'default', 'events')",
  "select * from s3('http://127.0.0.1:1/b/k')",
  'select * from events final',
  'select team_id from events',
  'select count() from events where team_id != 0',
  'select * from events settings readonly = 0',
  'select * from events; drop table events',
  'select * from events as t where t.team_id > 0',
  'select * from (select team_id from events)',
  'with e as (select * from events) select * from e',
  'select * from events array join [1, 2] as x',
  'select * from events sample 0.1',
  'select * from person_distinct_id2',
  'select * from events prewhere 1',
  'select * from `events`',
  'select * from default.events',
  'select * from events as e join events as f using distinct_id',
  'select 1 from events intersect select 1 from events',
];

const TEXT_FIELDS = [
  'event',
  'distinct_id',
  'properties.$browser',
  'person.properties.email',
  'toString(uuid)',
];

/** A statement that compiles and runs: the share of the fuzz that reaches the engine. */
function validStatement(random: Random, depth: number): string {
  const group = pick(random, TEXT_FIELDS);
  const filter = pick(random, TEXT_FIELDS);
  const value = pick(random, ["'signup'", "'user-1'", "'Chrome'", "''", "'x'' or 1=1 --'"]);
  const from =
    depth === 0 && random() < 0.3
      ? `(select * from events where ${filter} != ${value}) as s`
      : pick(random, ['events', 'events as e']);
  const where =
    random() < 0.5 ? `where ${filter} = ${value} or properties.price > ${Math.floor(random() * 30)}` : '';
  return `select ${group} as g, count() as c, max(properties.price) from ${from} ${where} group by g order by c desc, g limit ${1 + Math.floor(random() * 50)}`;
}

function selectList(random: Random, qualifier: string): string {
  const items: string[] = [];
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i += 1) {
    const roll = random();
    const expr =
      roll < 0.3 ? pick(random, AGGREGATES) : roll < 0.45 ? `${qualifier}*` : generateExpression(random, 2);
    items.push(random() < 0.3 && !expr.endsWith('*') ? `${expr} as a${i}` : expr);
  }
  return items.join(', ');
}

function fromClause(random: Random, depth: number): { sql: string; qualifier: string } {
  const roll = random();
  if (roll < 0.5 || depth > 1) return { sql: random() < 0.5 ? 'events' : 'events as e', qualifier: '' };
  if (roll < 0.75) {
    return { sql: `(${generateStatement(random, depth + 1)}) as s`, qualifier: '' };
  }
  const join = pick(random, ['inner join', 'left join', 'right join', 'full outer join']);
  if (random() < 0.3) {
    return { sql: `events as a ${join} events as b on a.distinct_id = b.distinct_id`, qualifier: 'a.' };
  }
  // The joined side names its columns apart, so the generated fields name the events table's.
  return {
    sql: `events as a ${join} (select distinct_id as did, count() as n from events group by did) as b on a.distinct_id = b.did`,
    qualifier: pick(random, ['a.', 'b.']),
  };
}

/** One statement; about one in five is an attack or a malformed mix. */
export function generateStatement(random: Random, depth = 0): string {
  if (depth === 0 && random() < 0.2) {
    return random() < 0.6
      ? pick(random, HOSTILE_STATEMENTS)
      : `select ${generateHostileExpression(random)} from events where ${generateHostileExpression(random)}`;
  }
  if (random() < 0.35) return validStatement(random, depth);
  const from = fromClause(random, depth);
  const parts = [
    `select ${random() < 0.1 ? 'distinct ' : ''}${selectList(random, from.qualifier)} from ${from.sql}`,
  ];
  const where =
    random() < 0.6
      ? [random() < 0.6 ? `isNotNull(${generateExpression(random, 2)})` : generateExpression(random, 2)]
      : [];
  if (random() < 0.15) where.push("distinct_id in (select distinct_id from events where event = 'signup')");
  if (where.length > 0) parts.push(`where ${where.join(' and ')}`);
  if (random() < 0.3) parts.push(`group by ${generateExpression(random, 2)}`);
  if (random() < 0.1) parts.push('having count() > 0');
  if (random() < 0.3)
    parts.push(`order by ${generateExpression(random, 2)} ${pick(random, ['asc', 'desc'])}`);
  if (random() < 0.4) parts.push(`limit ${Math.floor(random() * 200)}`);
  const statement = parts.join(' ');
  if (depth === 0 && random() < 0.1) return `${statement} union all ${generateStatement(random, depth + 1)}`;
  return statement;
}

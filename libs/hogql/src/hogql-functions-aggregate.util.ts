import { define, isStar, type HogQLFunction } from './hogql-function.util';
import { sqlExpr } from './hogql-sql.util';

// Aggregates: select only, never nested; their presence turns the other columns into GROUP BY.

function numericAggregate(name: string): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    compile: (args, compiler, call) =>
      compiler.insideAggregate(name, call.node, () => {
        const value = compiler.numberArgument(args[0], name);
        return sqlExpr(`${name}(${value.sql})`, 'number', { nullable: true, aggregate: true });
      }),
  });
}

function valueAggregate(name: string): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    compile: (args, compiler, call) =>
      compiler.insideAggregate(name, call.node, () => {
        const value = compiler.value(args[0]);
        if (value.type === 'interval')
          throw compiler.error(`${name}() cannot take an interval`, call.node, 'type');
        return sqlExpr(`${name}(${value.sql})`, value.type, {
          nullable: value.nullable,
          aggregate: true,
        });
      }),
  });
}

export const AGGREGATE_FUNCTIONS: [string, HogQLFunction][] = [
  define({
    name: 'count',
    minArgs: 0,
    maxArgs: 1,
    aggregate: true,
    allowsDistinct: true,
    compile: (args, compiler, call) =>
      compiler.insideAggregate('count', call.node, () => {
        if (args.length === 0 || (isStar(args[0]) && !call.distinct)) {
          return sqlExpr('count()', 'number', { aggregate: true });
        }
        const value = compiler.value(args[0]);
        const sql = call.distinct ? `count(DISTINCT ${value.sql})` : `count(${value.sql})`;
        return sqlExpr(sql, 'number', { aggregate: true });
      }),
  }),
  // PostHog's experimental listing called count() `total()`.
  define({
    name: 'total',
    minArgs: 0,
    maxArgs: 0,
    aggregate: true,
    compile: (_args, compiler, call) =>
      compiler.insideAggregate('total', call.node, () => sqlExpr('count()', 'number', { aggregate: true })),
  }),
  define({
    name: 'countIf',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    compile: (args, compiler, call) =>
      compiler.insideAggregate('countIf', call.node, () => {
        const condition = compiler.condition(args[0]);
        return sqlExpr(`countIf(${condition.sql})`, 'number', { aggregate: true });
      }),
  }),
  define({
    name: 'uniq',
    minArgs: 1,
    maxArgs: 1,
    aggregate: true,
    compile: (args, compiler, call) =>
      compiler.insideAggregate('uniq', call.node, () => {
        const value = compiler.value(args[0]);
        return sqlExpr(`uniq(${value.sql})`, 'number', { aggregate: true });
      }),
  }),
  numericAggregate('sum'),
  numericAggregate('avg'),
  valueAggregate('min'),
  valueAggregate('max'),
  valueAggregate('any'),
];

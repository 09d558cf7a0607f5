import type { AstNode } from './hogql-ast.util';
import { define, type HogQLFunction } from './hogql-function.util';
import { anyAggregate, sqlExpr, type ExpressionCompiler, type SqlExpr, type SqlType } from './hogql-sql.util';

// Dates, date-times and intervals (all UTC).

const DATE_UNITS: Readonly<Record<string, string>> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  week: 'Week',
  month: 'Month',
  quarter: 'Quarter',
  year: 'Year',
};

function dateUnit(args: readonly AstNode[], compiler: ExpressionCompiler, name: string): string {
  const unit = compiler.stringLiteral(args[0], name).toLowerCase().replace(/s$/, '');
  if (!(unit in DATE_UNITS)) {
    throw compiler.error(
      `${name}() takes a unit among ${Object.keys(DATE_UNITS).join(', ')}`,
      args[0],
      'value',
    );
  }
  return unit;
}

/** Time-of-day functions need a DateTime; a Date argument is widened to midnight UTC. */
function dateTimeOnly(value: SqlExpr): string {
  return value.type === 'date' ? `toDateTime(${value.sql}, 'UTC')` : value.sql;
}

function dateFunction(
  name: string,
  returns: SqlType,
  options: { needsTime?: boolean } = {},
): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.dateTimeArgument(args[0], name);
      const argument = options.needsTime ? dateTimeOnly(value) : value.sql;
      return sqlExpr(`${name}(${argument})`, returns, {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  });
}

function intervalFunction(unit: string): [string, HogQLFunction] {
  const name = `toInterval${unit}`;
  return define({
    name,
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.numberArgument(args[0], name);
      return sqlExpr(`${name}(${value.sql})`, 'interval', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  });
}

function dateShift(name: 'dateAdd' | 'dateSub'): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 3,
    maxArgs: 3,
    compile: (args, compiler) => {
      const unit = DATE_UNITS[dateUnit(args, compiler, name)];
      const amount = compiler.numberArgument(args[1], name);
      const date = compiler.dateTimeArgument(args[2], name);
      const operator = name === 'dateAdd' ? 'plus' : 'minus';
      return sqlExpr(`${operator}(${date.sql}, toInterval${unit}(${amount.sql}))`, date.type, {
        nullable: amount.nullable || date.nullable,
        aggregate: anyAggregate([amount, date]),
      });
    },
  });
}

export const DATE_FUNCTIONS: [string, HogQLFunction][] = [
  define({
    name: 'now',
    minArgs: 0,
    maxArgs: 0,
    compile: () => sqlExpr(`now64(6, 'UTC')`, 'datetime'),
  }),
  define({
    name: 'today',
    minArgs: 0,
    maxArgs: 0,
    compile: () => sqlExpr('today()', 'date'),
  }),
  dateFunction('toStartOfMinute', 'datetime', { needsTime: true }),
  dateFunction('toStartOfHour', 'datetime', { needsTime: true }),
  dateFunction('toStartOfDay', 'datetime'),
  dateFunction('toStartOfWeek', 'date'),
  dateFunction('toMonday', 'date'),
  dateFunction('toStartOfMonth', 'date'),
  dateFunction('toStartOfQuarter', 'date'),
  dateFunction('toStartOfYear', 'date'),
  dateFunction('toYear', 'number'),
  dateFunction('toMonth', 'number'),
  dateFunction('toDayOfMonth', 'number'),
  dateFunction('toDayOfWeek', 'number'),
  dateFunction('toHour', 'number', { needsTime: true }),
  dateFunction('toMinute', 'number', { needsTime: true }),
  dateFunction('toSecond', 'number', { needsTime: true }),
  define({
    name: 'toUnixTimestamp',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.dateTimeArgument(args[0], 'toUnixTimestamp');
      return sqlExpr(`toUnixTimestamp(${dateTimeOnly(value)})`, 'number', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  }),
  define({
    name: 'dateDiff',
    minArgs: 3,
    maxArgs: 3,
    compile: (args, compiler) => {
      // The unit is one of our own words, not the user's text.
      const unit = dateUnit(args, compiler, 'dateDiff');
      const start = compiler.dateTimeArgument(args[1], 'dateDiff');
      const end = compiler.dateTimeArgument(args[2], 'dateDiff');
      return sqlExpr(`dateDiff('${unit}', ${start.sql}, ${end.sql})`, 'number', {
        nullable: start.nullable || end.nullable,
        aggregate: anyAggregate([start, end]),
      });
    },
  }),
  dateShift('dateAdd'),
  dateShift('dateSub'),
  ...Object.values(DATE_UNITS).map(intervalFunction),
];

import { article, define, isStringLiteral, MAX_VARIADIC, type HogQLFunction } from './hogql-function.util';
import { anyAggregate, sqlExpr, type PatternOperator, type SqlType } from './hogql-sql.util';

// Strings, conversions and JSON.

function stringToString(name: string, clickhouse: string, returns: SqlType): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.stringArgument(args[0], name);
      return sqlExpr(`${clickhouse}(${value.sql})`, returns, {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  });
}

function stringPredicate(name: string): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 2,
    maxArgs: 2,
    compile: (args, compiler) => {
      const haystack = compiler.stringArgument(args[0], name);
      const needle = compiler.stringArgument(args[1], name);
      return sqlExpr(`${name}(${haystack.sql}, ${needle.sql})`, 'bool', {
        nullable: haystack.nullable || needle.nullable,
        aggregate: anyAggregate([haystack, needle]),
      });
    },
  });
}

function replaceFunction(name: string, clickhouse: string): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 3,
    maxArgs: 3,
    compile: (args, compiler) => {
      const value = compiler.stringArgument(args[0], name);
      const from = compiler.params.string(compiler.stringLiteral(args[1], name));
      const to = compiler.params.string(compiler.stringLiteral(args[2], name));
      return sqlExpr(`${clickhouse}(${value.sql}, ${from}, ${to})`, 'string', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  });
}

function patternFunction(name: string, operator: PatternOperator): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 2,
    maxArgs: 2,
    compile: (args, compiler, call) => compiler.compare(operator, args[0], args[1], call.node),
  });
}

export const STRING_FUNCTIONS: [string, HogQLFunction][] = [
  stringToString('lower', 'lower', 'string'),
  stringToString('upper', 'upper', 'string'),
  stringToString('length', 'lengthUTF8', 'number'),
  stringToString('empty', 'empty', 'bool'),
  stringToString('notEmpty', 'notEmpty', 'bool'),
  stringToString('trim', 'trimBoth', 'string'),
  stringToString('trimLeft', 'trimLeft', 'string'),
  stringToString('trimRight', 'trimRight', 'string'),
  stringPredicate('startsWith'),
  stringPredicate('endsWith'),
  define({
    name: 'position',
    minArgs: 2,
    maxArgs: 2,
    compile: (args, compiler) => {
      const haystack = compiler.stringArgument(args[0], 'position');
      const needle = compiler.stringArgument(args[1], 'position');
      return sqlExpr(`positionUTF8(${haystack.sql}, ${needle.sql})`, 'number', {
        nullable: haystack.nullable || needle.nullable,
        aggregate: anyAggregate([haystack, needle]),
      });
    },
  }),
  define({
    name: 'concat',
    minArgs: 1,
    maxArgs: MAX_VARIADIC,
    compile: (args, compiler, call) => {
      // NULL-tolerant like PostHog's concat: a NULL part is ''.
      const parts = args.map((arg) => {
        const value = compiler.value(arg);
        if (value.type === 'interval')
          throw compiler.error('concat() cannot take an interval', call.node, 'type');
        return value;
      });
      const sql = parts
        .map((part) =>
          part.type === 'string' && !part.nullable ? part.sql : `ifNull(toString(${part.sql}), '')`,
        )
        .join(', ');
      return sqlExpr(`concat(${sql})`, 'string', { aggregate: anyAggregate(parts) });
    },
  }),
  define({
    name: 'substring',
    minArgs: 2,
    maxArgs: 3,
    compile: (args, compiler) => {
      const value = compiler.stringArgument(args[0], 'substring');
      const offset = compiler.integerLiteral(args[1], 'substring').sql;
      const length = args[2] ? `, ${compiler.integerLiteral(args[2], 'substring').sql}` : '';
      return sqlExpr(`substringUTF8(${value.sql}, ${offset}${length})`, 'string', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  }),
  replaceFunction('replace', 'replaceAll'),
  replaceFunction('replaceAll', 'replaceAll'),
  replaceFunction('replaceOne', 'replaceOne'),
  patternFunction('like', 'like'),
  patternFunction('ilike', 'ilike'),
  patternFunction('notLike', 'not like'),
  patternFunction('notILike', 'not ilike'),
  patternFunction('match', '=~'),
  define({
    name: 'extract',
    minArgs: 2,
    maxArgs: 2,
    compile: (args, compiler) => {
      const value = compiler.stringArgument(args[0], 'extract');
      const pattern = compiler.regexLiteral(args[1], 'extract');
      return sqlExpr(`extract(${value.sql}, ${pattern})`, 'string', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  }),
];

export const CONVERSION_FUNCTIONS: [string, HogQLFunction][] = [
  define({
    name: 'toString',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler, call) => {
      const value = compiler.value(args[0]);
      if (value.type === 'interval')
        throw compiler.error('toString() cannot take an interval', call.node, 'type');
      if (value.type === 'string' || value.type === 'property') {
        return sqlExpr(value.sql, 'string', { nullable: value.nullable, aggregate: value.aggregate });
      }
      return sqlExpr(`toString(${value.sql})`, 'string', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  }),
  castFunction('toInt', 'Int64'),
  castFunction('toFloat', 'Float64'),
  define({
    name: 'toDate',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler, call) => {
      if (isStringLiteral(args[0])) {
        const value = compiler.dateTimeArgument(args[0], 'toDate');
        return sqlExpr(`toDate(${value.sql})`, 'date', { literal: true });
      }
      const value = compiler.value(args[0]);
      const options = { nullable: value.nullable, aggregate: value.aggregate };
      switch (value.type) {
        case 'date':
        case 'null':
          return value;
        case 'datetime':
          return sqlExpr(`toDate(${value.sql})`, 'date', options);
        case 'string':
        case 'property':
          return sqlExpr(`toDateOrNull(${value.sql})`, 'date', { ...options, nullable: true });
        default:
          throw compiler.error(`toDate() cannot take ${article(value.type)}`, call.node, 'type');
      }
    },
  }),
  define({
    name: 'toDateTime',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler, call) => {
      if (isStringLiteral(args[0])) return compiler.dateTimeArgument(args[0], 'toDateTime');
      const value = compiler.value(args[0]);
      const options = { nullable: value.nullable, aggregate: value.aggregate };
      switch (value.type) {
        case 'datetime':
        case 'null':
          return value;
        case 'date':
        case 'number':
          return sqlExpr(`toDateTime64(${value.sql}, 6, 'UTC')`, 'datetime', options);
        case 'string':
        case 'property':
          return sqlExpr(`parseDateTime64BestEffortOrNull(${value.sql}, 6, 'UTC')`, 'datetime', {
            ...options,
            nullable: true,
          });
        default:
          throw compiler.error(`toDateTime() cannot take ${article(value.type)}`, call.node, 'type');
      }
    },
  }),
];

function castFunction(name: string, type: 'Int64' | 'Float64'): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler, call) => {
      const value = compiler.value(args[0]);
      if (!['string', 'property', 'number', 'bool', 'null'].includes(value.type)) {
        throw compiler.error(`${name}() cannot take ${article(value.type)}`, call.node, 'type');
      }
      // Like PostHog: a value that does not convert exactly is NULL, never an error.
      return sqlExpr(`accurateCastOrNull(${value.sql}, '${type}')`, 'number', {
        nullable: true,
        aggregate: value.aggregate,
      });
    },
  });
}

function jsonFunction(name: string, returns: SqlType): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: 11,
    compile: (args, compiler) => {
      const json = compiler.stringArgument(args[0], name);
      const keys = args.slice(1).map((arg) => {
        if (arg.node === 'Constant' && typeof arg.value === 'number') {
          return compiler.integerLiteral(arg, name).sql;
        }
        return compiler.params.string(compiler.stringLiteral(arg, name));
      });
      const sql = `${name}(${[json.sql, ...keys].join(', ')})`;
      return sqlExpr(sql, returns, { nullable: json.nullable, aggregate: json.aggregate });
    },
  });
}

export const JSON_FUNCTIONS: [string, HogQLFunction][] = [
  jsonFunction('JSONExtractString', 'string'),
  jsonFunction('JSONExtractRaw', 'string'),
  jsonFunction('JSONExtractInt', 'number'),
  jsonFunction('JSONExtractFloat', 'number'),
  jsonFunction('JSONExtractBool', 'bool'),
  jsonFunction('JSONHas', 'bool'),
  jsonFunction('JSONLength', 'number'),
];

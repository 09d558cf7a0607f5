import type { AstNode } from './hogql-ast.util';
import { define, MAX_VARIADIC, type HogQLFunction } from './hogql-function.util';
import {
  anyAggregate,
  anyNullable,
  coerceTo,
  sqlExpr,
  type ArithmeticOperator,
  type CompareOperator,
  type ExpressionCompiler,
  type SqlExpr,
} from './hogql-sql.util';

// Conditionals, NULL handling, numbers, and operators in function form (`equals(a, b)`).

function coalesceFunction(
  name: 'coalesce' | 'ifNull',
  minArgs: number,
  maxArgs: number,
): [string, HogQLFunction] {
  return define({
    name,
    minArgs,
    maxArgs,
    compile: (args, compiler, call) => {
      const parts = args.map((arg) => compiler.value(arg));
      const type = compiler.commonType(parts, `the arguments of ${name}()`, call.node);
      const coerced = parts.map((part) => coerceTo(part, type));
      return sqlExpr(`coalesce(${coerced.map((part) => part.sql).join(', ')})`, type, {
        nullable: coerced.every((part) => part.nullable),
        aggregate: anyAggregate(coerced),
      });
    },
  });
}

function branches(
  pairs: { condition: SqlExpr; value: SqlExpr }[],
  otherwise: SqlExpr,
  compiler: ExpressionCompiler,
  node: AstNode,
  what: string,
): SqlExpr {
  const values = [...pairs.map((pair) => pair.value), otherwise];
  const type = compiler.commonType(values, what, node);
  const parts = pairs.flatMap((pair) => [pair.condition.sql, coerceTo(pair.value, type).sql]);
  const elseSql = coerceTo(otherwise, type).sql;
  const all = [...pairs.map((pair) => pair.condition), ...values];
  const sql =
    pairs.length === 1
      ? `if(${parts[0]}, ${parts[1]}, ${elseSql})`
      : `multiIf(${parts.join(', ')}, ${elseSql})`;
  return sqlExpr(sql, type, {
    nullable: anyNullable(values) || type === 'null',
    aggregate: anyAggregate(all),
  });
}

export const CONDITIONAL_FUNCTIONS: [string, HogQLFunction][] = [
  coalesceFunction('coalesce', 1, MAX_VARIADIC),
  coalesceFunction('ifNull', 2, 2),
  define({
    name: 'if',
    minArgs: 3,
    maxArgs: 3,
    compile: (args, compiler, call) =>
      branches(
        [{ condition: compiler.condition(args[0]), value: compiler.value(args[1]) }],
        compiler.value(args[2]),
        compiler,
        call.node,
        'the branches of if()',
      ),
  }),
  define({
    name: 'multiIf',
    minArgs: 3,
    maxArgs: MAX_VARIADIC + 1,
    compile: (args, compiler, call) => {
      if (args.length % 2 === 0) {
        throw compiler.error('multiIf() takes condition/value pairs and a default', call.node, 'syntax');
      }
      const pairs: { condition: SqlExpr; value: SqlExpr }[] = [];
      for (let index = 0; index + 1 < args.length; index += 2) {
        pairs.push({ condition: compiler.condition(args[index]), value: compiler.value(args[index + 1]) });
      }
      return branches(
        pairs,
        compiler.value(args[args.length - 1]),
        compiler,
        call.node,
        'the branches of CASE',
      );
    },
  }),
  // `CASE x WHEN a THEN b ... ELSE c END`, as the parser spells it.
  define({
    name: '_caseWithExpression',
    minArgs: 4,
    maxArgs: MAX_VARIADIC + 2,
    compile: (args, compiler, call) => {
      if (args.length % 2 !== 0) {
        throw compiler.error('CASE needs WHEN/THEN pairs and an ELSE', call.node, 'syntax');
      }
      const subject = args[0];
      const pairs: { condition: SqlExpr; value: SqlExpr }[] = [];
      for (let index = 1; index + 1 < args.length; index += 2) {
        pairs.push({
          condition: compiler.compare('==', subject, args[index], args[index]),
          value: compiler.value(args[index + 1]),
        });
      }
      return branches(
        pairs,
        compiler.value(args[args.length - 1]),
        compiler,
        call.node,
        'the branches of CASE',
      );
    },
  }),
  define({
    name: 'isNull',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.value(args[0]);
      return sqlExpr(`isNull(${value.sql})`, 'bool', { aggregate: value.aggregate });
    },
  }),
  define({
    name: 'isNotNull',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.value(args[0]);
      return sqlExpr(`isNotNull(${value.sql})`, 'bool', { aggregate: value.aggregate });
    },
  }),
];

function numberFunction(name: string, options: { digits?: boolean } = {}): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 1,
    maxArgs: options.digits ? 2 : 1,
    compile: (args, compiler) => {
      const value = compiler.numberArgument(args[0], name);
      const digits = args[1] ? `, ${compiler.integerLiteral(args[1], name).sql}` : '';
      return sqlExpr(`${name}(${value.sql}${digits})`, 'number', {
        nullable: value.nullable,
        aggregate: value.aggregate,
      });
    },
  });
}

export const NUMBER_FUNCTIONS: [string, HogQLFunction][] = [
  numberFunction('round', { digits: true }),
  numberFunction('floor', { digits: true }),
  numberFunction('ceil', { digits: true }),
  numberFunction('abs'),
  numberFunction('sqrt'),
];

function logicalFunction(name: 'and' | 'or'): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 2,
    maxArgs: MAX_VARIADIC,
    compile: (args, compiler) => {
      const parts = args.map((arg) => compiler.condition(arg));
      return sqlExpr(`${name}(${parts.map((part) => part.sql).join(', ')})`, 'bool', {
        nullable: anyNullable(parts),
        aggregate: anyAggregate(parts),
      });
    },
  });
}

function compareFunction(name: string, operator: CompareOperator): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 2,
    maxArgs: 2,
    compile: (args, compiler, call) => compiler.compare(operator, args[0], args[1], call.node),
  });
}

function arithmeticFunction(name: string, operator: ArithmeticOperator): [string, HogQLFunction] {
  return define({
    name,
    minArgs: 2,
    maxArgs: 2,
    compile: (args, compiler, call) => compiler.arithmetic(operator, args[0], args[1], call.node),
  });
}

export const OPERATOR_FUNCTIONS: [string, HogQLFunction][] = [
  logicalFunction('and'),
  logicalFunction('or'),
  define({
    name: 'not',
    minArgs: 1,
    maxArgs: 1,
    compile: (args, compiler) => {
      const value = compiler.condition(args[0]);
      return sqlExpr(`not(${value.sql})`, 'bool', { nullable: value.nullable, aggregate: value.aggregate });
    },
  }),
  compareFunction('equals', '=='),
  compareFunction('notEquals', '!='),
  compareFunction('less', '<'),
  compareFunction('lessOrEquals', '<='),
  compareFunction('greater', '>'),
  compareFunction('greaterOrEquals', '>='),
  arithmeticFunction('plus', '+'),
  arithmeticFunction('minus', '-'),
  arithmeticFunction('multiply', '*'),
  arithmeticFunction('divide', '/'),
  arithmeticFunction('modulo', '%'),
];

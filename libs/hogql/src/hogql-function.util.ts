import type { AstNode } from './hogql-ast.util';
import type { ExpressionCompiler, SqlExpr, SqlType } from './hogql-sql.util';

export interface CallInfo {
  name: string;
  node: AstNode;
  distinct: boolean;
}

export interface HogQLFunction {
  name: string;
  minArgs: number;
  maxArgs: number;
  aggregate?: boolean;
  /** `count(DISTINCT x)`. */
  allowsDistinct?: boolean;
  compile(args: readonly AstNode[], compiler: ExpressionCompiler, call: CallInfo): SqlExpr;
}

export const MAX_VARIADIC = 100;

export function define(spec: HogQLFunction): [string, HogQLFunction] {
  return [spec.name.toLowerCase(), spec];
}

export function isStringLiteral(node: AstNode): boolean {
  return node.node === 'Constant' && typeof node.value === 'string' && node.value_type !== 'number';
}

export function article(type: SqlType): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

export function isStar(node: AstNode): boolean {
  const chain = node.chain;
  return node.node === 'Field' && Array.isArray(chain) && chain.length === 1 && chain[0] === '*';
}

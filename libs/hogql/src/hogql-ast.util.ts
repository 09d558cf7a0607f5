/** The parser's JSON AST, read defensively: anything unexpected is unsupported, never trusted. */
export interface AstPosition {
  line: number;
  column: number;
  /** Offset in Unicode code points (not UTF-16 units) into the parsed text. */
  offset: number;
}

export interface AstNode {
  node: string;
  start?: AstPosition;
  end?: AstPosition;
  [key: string]: unknown;
}

export interface AstParseError {
  error: true;
  type: string;
  message: string;
  start?: AstPosition;
  end?: AstPosition;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isAstNode(value: unknown): value is AstNode {
  return isRecord(value) && typeof value.node === 'string';
}

export function isAstParseError(value: unknown): value is AstParseError {
  return isRecord(value) && value.error === true;
}

export function childNode(node: AstNode, key: string): AstNode | undefined {
  const value = node[key];
  return isAstNode(value) ? value : undefined;
}

export function childNodes(node: AstNode, key: string): AstNode[] | undefined {
  const value = node[key];
  if (!Array.isArray(value)) return undefined;
  const nodes: AstNode[] = [];
  for (const item of value) {
    if (!isAstNode(item)) return undefined;
    nodes.push(item);
  }
  return nodes;
}

export function stringField(node: AstNode, key: string): string | undefined {
  const value = node[key];
  return typeof value === 'string' ? value : undefined;
}

/** The chain of a Field node (`properties.$browser` is `['properties', '$browser']`). */
export function fieldChain(node: AstNode): string[] | undefined {
  const chain = node.chain;
  if (!Array.isArray(chain) || chain.length === 0) return undefined;
  const parts: string[] = [];
  for (const part of chain) {
    if (typeof part !== 'string') return undefined;
    parts.push(part);
  }
  return parts;
}

/** A literal as the parser gives it: JSON scalars, plus big or non-finite numbers as text. */
export type ConstantValue = string | number | boolean | null;

export interface ConstantNodeValue {
  value: ConstantValue;
  /** The parser marks numbers it could not give as JSON numbers (too big, NaN, Infinity). */
  numberText: boolean;
}

export function constantValue(node: AstNode): ConstantNodeValue | undefined {
  if (node.node !== 'Constant') return undefined;
  const value = node.value;
  if (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  ) {
    return { value, numberText: node.value_type === 'number' && typeof value === 'string' };
  }
  return undefined;
}

/** Depth and size of a parsed tree, counted without recursion so a deep tree cannot blow the stack. */
export function measureAst(root: unknown): { depth: number; nodes: number } {
  let depth = 0;
  let nodes = 0;
  const stack: { value: unknown; level: number }[] = [{ value: root, level: 1 }];
  while (stack.length > 0) {
    const { value, level } = stack.pop()!;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, level });
      continue;
    }
    if (!isRecord(value)) continue;
    if (typeof value.node === 'string') {
      nodes += 1;
      depth = Math.max(depth, level);
    }
    const childLevel = typeof value.node === 'string' ? level + 1 : level;
    for (const [key, child] of Object.entries(value)) {
      if (key === 'start' || key === 'end') continue;
      if (typeof child === 'object' && child !== null) stack.push({ value: child, level: childLevel });
    }
  }
  return { depth, nodes };
}

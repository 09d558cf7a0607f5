import { HogQLError } from './hogql.errors';

export type QueryParamType = 'String' | 'Int64' | 'Float64';

export type QueryParamValues = Record<string, string | number>;

const PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/;

export interface QueryParamsOptions {
  /** Placeholder names are `<prefix><n>`; pick one your own parameters do not use. Default `p`. */
  prefix?: string;
  /** A backstop: the compilers bound far less. */
  maxParams?: number;
}

/**
 * SECURITY: every request value reaches the SQL text only as a `{p0:String}` placeholder. Share one
 * instance per query so that names stay unique.
 */
export class QueryParams {
  private readonly prefix: string;
  private readonly maxParams: number;
  private readonly entries: QueryParamValues = {};
  private count = 0;

  constructor(options: QueryParamsOptions = {}) {
    const prefix = options.prefix ?? 'p';
    if (!PREFIX.test(prefix)) {
      throw new Error(`Invalid query parameter prefix ${JSON.stringify(prefix)}`);
    }
    this.prefix = prefix;
    this.maxParams = options.maxParams ?? 10_000;
  }

  get values(): Readonly<QueryParamValues> {
    return this.entries;
  }

  get size(): number {
    return this.count;
  }

  string(value: string): string {
    return this.add('String', value);
  }

  int(value: number): string {
    if (!Number.isSafeInteger(value)) {
      throw new HogQLError(`Integer ${String(value)} is out of range`, { kind: 'value' });
    }
    return this.add('Int64', value);
  }

  float(value: number): string {
    if (!Number.isFinite(value)) {
      throw new HogQLError(`Number ${String(value)} is not finite`, { kind: 'value' });
    }
    // NOTE: chDB's parameter binding refuses integer-valued numbers past 2^53 (`1e300`) as possibly
    // imprecise; as text they are exactly the Float64 they stand for.
    return this.add(
      'Float64',
      Number.isSafeInteger(value) || !Number.isInteger(value) ? value : String(value),
    );
  }

  number(value: number): string {
    return Number.isSafeInteger(value) ? this.int(value) : this.float(value);
  }

  private add(type: QueryParamType, value: string | number): string {
    if (this.count >= this.maxParams) {
      throw new HogQLError(`The query binds more than ${this.maxParams} values`, {
        kind: 'limit',
      });
    }
    const name = `${this.prefix}${this.count}`;
    this.count += 1;
    this.entries[name] = value;
    return `{${name}:${type}}`;
  }
}

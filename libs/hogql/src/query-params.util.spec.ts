import { HogQLError } from './hogql.errors';
import { QueryParams } from './query-params.util';

describe('QueryParams', () => {
  it('hands out typed placeholders in order and keeps the values', () => {
    const params = new QueryParams();
    expect(params.string("it's")).toBe('{p0:String}');
    expect(params.int(-3)).toBe('{p1:Int64}');
    expect(params.float(1.5)).toBe('{p2:Float64}');
    expect(params.number(2)).toBe('{p3:Int64}');
    expect(params.number(2.5)).toBe('{p4:Float64}');
    expect(params.values).toEqual({ p0: "it's", p1: -3, p2: 1.5, p3: 2, p4: 2.5 });
    expect(params.size).toBe(5);
  });

  it('binds a float too big to be a safe integer as its text', () => {
    const params = new QueryParams();
    params.float(1e300);
    params.float(2 ** 60);
    expect(params.values).toEqual({ p0: '1e+300', p1: '1152921504606847000' });
  });

  it('uses the given prefix', () => {
    const params = new QueryParams({ prefix: 'hogql_' });
    expect(params.string('a')).toBe('{hogql_0:String}');
  });

  it.each(['', '1p', 'p-', 'p}', 'a'.repeat(33)])('refuses the prefix %j', (prefix) => {
    expect(() => new QueryParams({ prefix })).toThrow('Invalid query parameter prefix');
  });

  it('refuses integers it cannot bind exactly and non-finite floats', () => {
    const params = new QueryParams();
    expect(() => params.int(2 ** 53)).toThrow(HogQLError);
    expect(() => params.int(1.5)).toThrow(HogQLError);
    expect(() => params.float(Number.POSITIVE_INFINITY)).toThrow(HogQLError);
    expect(() => params.float(Number.NaN)).toThrow(HogQLError);
    expect(params.size).toBe(0);
  });

  it('bounds the number of values', () => {
    const params = new QueryParams({ maxParams: 2 });
    params.string('a');
    params.string('b');
    expect(() => params.string('c')).toThrow('The query binds more than 2 values');
  });
});

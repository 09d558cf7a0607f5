import { hogqlErrorFromClickHouse } from './clickhouse-error.util';
import { HogQLError } from './hogql.errors';

describe('hogqlErrorFromClickHouse', () => {
  it.each([
    [{ type: 'ILLEGAL_TYPE_OF_ARGUMENT', code: '43' }, 'ILLEGAL_TYPE_OF_ARGUMENT'],
    [{ type: 'CANNOT_COMPILE_REGEXP', code: '427' }, 'CANNOT_COMPILE_REGEXP'],
    [{ code: '386' }, 'NO_COMMON_TYPE'],
    [{ type: 'CANNOT_PARSE_DATETIME' }, 'CANNOT_PARSE_DATETIME'],
  ])('turns %j into a 400', (error, name) => {
    const converted = hogqlErrorFromClickHouse(Object.assign(new Error('boom'), error), 'where');
    expect(converted).toBeInstanceOf(HogQLError);
    expect(converted).toMatchObject({
      attr: 'where',
      message: `The query could not run on these expressions (ClickHouse ${name})`,
    });
  });

  it.each([
    { type: 'MEMORY_LIMIT_EXCEEDED', code: '241' },
    { type: 'TIMEOUT_EXCEEDED', code: '159' },
    { type: 'UNKNOWN_TABLE', code: '60' },
    { code: '999' },
    {},
    null,
    'ILLEGAL_TYPE_OF_ARGUMENT',
  ])('leaves %j alone', (error) => {
    expect(hogqlErrorFromClickHouse(error)).toBeUndefined();
  });
});

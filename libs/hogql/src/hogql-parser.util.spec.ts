import { HogQLError } from './hogql.errors';
import { HogQLParser } from './hogql-parser.util';

const parser = new HogQLParser();

afterAll(async () => {
  await parser.close();
});

describe('HogQLParser', () => {
  it('parses an expression to the AST, with code-point positions', async () => {
    expect(await parser.parseExpr("'💥' = event", 5_000)).toEqual({
      node: 'CompareOperation',
      op: '==',
      left: {
        node: 'Constant',
        value: '💥',
        start: { line: 1, column: 0, offset: 0 },
        end: expect.any(Object),
      },
      right: {
        node: 'Field',
        chain: ['event'],
        start: { line: 1, column: expect.any(Number), offset: 6 },
        end: { line: 1, column: expect.any(Number), offset: 11 },
      },
      start: expect.any(Object),
      end: expect.any(Object),
    });
  });

  it("returns the parser's error object for a syntax error", async () => {
    expect(await parser.parseExpr('event ==== 1', 5_000)).toMatchObject({ error: true, type: 'SyntaxError' });
  });

  it('parses a whole query, with code-point positions into it', async () => {
    expect(await parser.parseSelect("SELECT '💥' AS boom, event FROM events", 5_000)).toMatchObject({
      node: 'SelectQuery',
      select: [
        { node: 'Alias', alias: 'boom', expr: { node: 'Constant', value: '💥' } },
        { node: 'Field', chain: ['event'], start: { offset: 20 }, end: { offset: 25 } },
      ],
      select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    });
    expect(await parser.parseSelect('SELECT event FROM events UNION ALL SELECT 1', 5_000)).toMatchObject({
      node: 'SelectSetQuery',
    });
    expect(await parser.parseSelect('SELECT event,, FROM events', 5_000)).toMatchObject({
      error: true,
      type: 'SyntaxError',
    });
  });

  it('cuts off a query parse that overruns its deadline, then parses again', async () => {
    const slow = `SELECT ${'lower('.repeat(20)}event${')'.repeat(20)} FROM events`;
    await expect(parser.parseSelect(slow, 1)).rejects.toThrow(
      new HogQLError(`Query "${slow.slice(0, 120)}…" is too complex to parse in time`, { kind: 'limit' }),
    );
    expect(await parser.parseSelect('SELECT event FROM events', 5_000)).toMatchObject({
      node: 'SelectQuery',
    });
  });

  it('answers parses queued together, each with its own result', async () => {
    const texts = Array.from({ length: 20 }, (_, index) => `event = '${index}'`);
    const results = await Promise.all(texts.map((text) => parser.parseExpr(text, 5_000)));
    expect(results.map((result) => (result as { right: { value: string } }).right.value)).toEqual(
      texts.map((_, index) => String(index)),
    );
  });

  it('cuts off a parse that overruns its deadline, then parses again', async () => {
    const slow = `${'not lower('.repeat(30)}event${')'.repeat(30)}`;
    await expect(parser.parseExpr(slow, 1)).rejects.toThrow(
      new HogQLError(`Expression "${slow.slice(0, 120)}…" is too complex to parse in time`, {
        kind: 'limit',
      }),
    );
    expect(await parser.parseExpr('event', 5_000)).toMatchObject({ node: 'Field', chain: ['event'] });
  });

  it('survives input that crashes the WebAssembly parser, then parses again', async () => {
    const crashing = Array.from({ length: 400 }, () => 'a').join(' + ');
    const error = await parser.parseExpr(crashing, 20_000).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HogQLError);
    expect((error as HogQLError).message).toMatch(/could not be parsed$/);
    expect(await parser.parseExpr('event', 5_000)).toMatchObject({ node: 'Field', chain: ['event'] });
  });

  it('refuses to parse once closed', async () => {
    const closed = new HogQLParser();
    expect(await closed.parseExpr('1', 5_000)).toMatchObject({ node: 'Constant' });
    await closed.close();
    await expect(closed.parseExpr('1', 5_000)).rejects.toThrow('The HogQL parser is closed');
  });
});

import { toCsv } from './csv.util';

describe('toCsv', () => {
  it('flattens nested objects and arrays into sorted dotted columns', () => {
    expect(
      toCsv([
        { b: 1, a: { x: 'y', list: ['p', 'q'] } },
        { b: 2, c: null },
      ]),
    ).toBe('a.list.0,a.list.1,a.x,b,c\r\np,q,y,1,\r\n,,,2,\r\n');
  });

  it('quotes cells holding commas, quotes, line breaks or edge spaces', () => {
    expect(toCsv([{ v: 'a,b' }, { v: 'say "hi"' }, { v: 'two\nlines' }, { v: ' padded' }])).toBe(
      'v\r\n"a,b"\r\n"say ""hi"""\r\n"two\nlines"\r\n" padded"\r\n',
    );
  });

  it('writes a header only for no records', () => {
    expect(toCsv([])).toBe('\r\n');
  });
});

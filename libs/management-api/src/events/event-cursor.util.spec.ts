import { decodeEventCursor, encodeEventCursor } from './event-cursor.util';

describe('event cursor', () => {
  it('round-trips a timestamp and uuid through an opaque URL-safe string', () => {
    const cursor = { timestamp: '2026-11-22 06:00:00.123456', uuid: '01a201dd-5232-75dd-a3b1-db089bdba357' };
    const encoded = encodeEventCursor(cursor);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeEventCursor(encoded)).toEqual(cursor);
  });

  it.each(['', 'garbage', Buffer.from("2026-11-22 06:00:00.123456|x' OR 1=1").toString('base64url')])(
    'refuses %j with a 400 naming the cursor',
    (value) => {
      expect(() => decodeEventCursor(value)).toThrow(
        expect.objectContaining({ status: 400, attr: 'cursor' }),
      );
    },
  );
});

import { Duplex } from 'node:stream';

/** One end's writes reach the other on the microtask queue: in order, never re-entrant, no loop turn. */
class InProcessEnd extends Duplex {
  private peer: InProcessEnd | undefined;

  constructor() {
    // As a net.Socket: a peer that ended its side ends this one's too.
    super({ allowHalfOpen: false });
  }

  static pair(): [InProcessEnd, InProcessEnd] {
    const one = new InProcessEnd();
    const other = new InProcessEnd();
    one.peer = other;
    other.peer = one;
    return [one, other];
  }

  override _read(): void {
    // What the peer writes is pushed as it comes: nothing to fetch.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const { peer } = this;
    queueMicrotask(() => {
      if (peer && !peer.destroyed) peer.push(chunk);
    });
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    const { peer } = this;
    queueMicrotask(() => {
      if (peer && !peer.destroyed) peer.push(null);
    });
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const { peer } = this;
    // Behind what this end wrote before: the peer reads it, then sees the connection close.
    queueMicrotask(() => peer?.destroy());
    callback(error);
  }
}

/** The client end, with the net.Socket methods `pg` calls; a throwing `accept` is a refused connect. */
export function inProcessConnection(accept: (server: Duplex) => void): Duplex {
  const [client, server] = InProcessEnd.pair();
  return Object.assign(client, {
    connect(): Duplex {
      try {
        accept(server);
        process.nextTick(() => client.emit('connect'));
      } catch (error) {
        client.destroy(error instanceof Error ? error : new Error(String(error)));
      }
      return client;
    },
    setNoDelay: () => client,
    setKeepAlive: () => client,
    // No handle keeps the event loop alive: nothing to ref or unref.
    ref: () => client,
    unref: () => client,
  });
}

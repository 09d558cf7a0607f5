import { Duplex } from 'node:stream';

/**
 * One end of a connection that never leaves the process. What one end writes, the other reads on
 * the microtask queue: in order, never inside the writer's own call (no re-entrancy), and never a
 * turn of the event loop later, as a socket's bytes would be. Ending or destroying one end closes
 * the other, as a socket's peer sees it close.
 */
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

/**
 * A connection to a server in this process, as `pg`'s `stream` option takes it: the client end,
 * with the part of net.Socket's interface `pg` calls. `connect` hands the server end to `accept`
 * and announces the connection on the next tick, as a socket's 'connect' comes after `connect()`
 * returns. When `accept` throws (nothing accepts anymore), the client gets that error, as a
 * refused socket connect gives one.
 */
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

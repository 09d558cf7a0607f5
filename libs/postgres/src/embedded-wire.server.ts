import { createServer, type Server } from 'node:net';
import type { Duplex } from 'node:stream';
import { inProcessConnection } from './in-process-socket';
import type { PGlite } from '@electric-sql/pglite';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/**
 * Frontend messages after which a client waits for the server's answer: Sync, Query, Flush,
 * CopyDone, CopyFail. What a connection sends up to one of them runs as one unit.
 */
const GROUP_ENDS = new Set(['S', 'Q', 'H', 'c', 'f']);

/** A connection's named statements and portals get this prefix: PGlite has one session for all. */
const namePrefix = (id: number) => `c${id}_`;

const LISTEN = /^\s*LISTEN\s+("?)([A-Za-z_][\w$]*)\1\s*;?\s*$/i;
const UNLISTEN = /^\s*UNLISTEN\s+(\*|("?)([A-Za-z_][\w$]*)\2)\s*;?\s*$/i;

class Connection {
  buffer: Buffer = Buffer.alloc(0);
  started = false;
  closed = false;
  /** Messages of the unit being received. */
  pending: Uint8Array[] = [];
  /** Named statements it prepared (prefixed), deallocated when it closes. */
  readonly statements = new Set<string>();
  /** Channels it listens to. */
  readonly channels = new Set<string>();

  constructor(
    readonly id: number,
    readonly socket: Duplex,
  ) {}
}

interface Unit {
  connection: Connection;
  messages: Uint8Array[];
}

/** A frontend message: type byte, then its length (itself included), then the body. */
function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const cString = (value: string) => Buffer.from(`${value}\0`, 'utf8');
const simpleQuery = (sql: string) => message('Q', cString(sql));

/** The NUL-terminated string at `offset`, and where the next field starts. */
function readCString(body: Buffer, offset: number): [string, number] {
  const end = body.indexOf(0, offset);
  return [body.toString('utf8', offset, end), end + 1];
}

/** FATAL ErrorResponse, what Postgres answers a connection it refuses. */
function fatal(code: string, text: string): Buffer {
  return message(
    'E',
    Buffer.concat([
      cString(`SFATAL`),
      cString(`VFATAL`),
      cString(`C${code}`),
      cString(`M${text}`),
      Buffer.from([0]),
    ]),
  );
}

/**
 * The wire protocol of PGlite (Postgres in WASM, ONE session) for many `pg` connections at once,
 * on a Unix socket: what pglite-socket does, without its two faults.
 *
 * - A connection's messages up to the point where it waits (Sync, a simple Query, Flush) run as
 *   one unit, never interleaved with another connection's: pglite-socket queues single messages,
 *   so connection B's Parse could replace the unnamed statement between A's Parse and A's Bind,
 *   and A ran B's statement with its own parameters (electric-sql/pglite#1046). An open
 *   transaction keeps the session for its connection until it ends, as there.
 * - Named statements and portals are prefixed per connection (`c<id>_…`), and deallocated when it
 *   closes: `pg` prepares a named statement once per connection, and in one shared session the
 *   second connection's Parse failed with "prepared statement already exists".
 * - LISTEN works across connections: a NOTIFY's NotificationResponse appears in the answer of the
 *   connection whose commit sent it (the session listens for everyone), and is copied to every
 *   other connection that ran `LISTEN <channel>` (as a simple query, how `pg` sends it).
 */
export class EmbeddedWireServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  /** Every socket, refused ones included: stop() must not wait for a client to hang up. */
  private readonly sockets = new Set<Duplex>();
  private readonly queue: Unit[] = [];
  /** The drain loop running now, if any: stop() waits for the unit it is executing. */
  private running: Promise<void> | null = null;
  private stopped = false;
  /** The connection whose transaction is open: only its units run until it ends. */
  private owner: Connection | null = null;
  private nextId = 1;

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections: number,
  ) {
    this.server = createServer((socket) => this.accept(socket));
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(path, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * Refuses new connections, drops every open one and what they queued, and resolves once the unit
   * running now has finished: PGlite can then be closed. Nothing is rolled back or deallocated: the
   * session ends with PGlite.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    await this.running;
  }

  /**
   * A connection from this process that bypasses the socket, for `pg`'s `stream` option: the same
   * server, connection limit and session, without a turn of the event loop per round trip. A
   * transaction of a few statements then runs in one go instead of waiting behind whatever else
   * the process has to do between its statements.
   */
  connectInProcess(): Duplex {
    return inProcessConnection((server) => {
      if (this.stopped)
        throw Object.assign(new Error('the embedded Postgres has stopped'), { code: 'ECONNREFUSED' });
      this.accept(server);
    });
  }

  private accept(socket: Duplex): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    // A client that goes away mid-write (EPIPE, ECONNRESET): 'close' follows, which is what counts.
    socket.on('error', () => undefined);
    if (this.connections.size >= this.maxConnections) {
      socket.end(fatal('53300', 'sorry, too many clients already'));
      return;
    }
    const connection = new Connection(this.nextId++, socket);
    this.connections.add(connection);
    socket.on('data', (chunk: Buffer) => this.receive(connection, chunk));
    socket.on('close', () => this.close(connection));
  }

  private receive(connection: Connection, chunk: Buffer): void {
    if (connection.closed) return;
    connection.buffer = connection.buffer.length ? Buffer.concat([connection.buffer, chunk]) : chunk;
    for (;;) {
      const { buffer } = connection;
      if (!connection.started) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        const code = buffer.readInt32BE(4);
        const startup = buffer.subarray(0, length);
        connection.buffer = buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          connection.socket.write('N');
        } else if (code === PROTOCOL_3) {
          connection.started = true;
          this.enqueue({ connection, messages: [new Uint8Array(startup)] });
        } else {
          // A CancelRequest: one session runs one statement at a time, and a statement that is
          // running holds the event loop, so there is nothing to cancel. Anything else is no Postgres.
          if (code !== CANCEL_REQUEST) connection.socket.write(fatal('08P01', 'invalid startup packet'));
          connection.socket.destroy();
          return;
        }
        continue;
      }
      if (buffer.length < 5) return;
      const length = buffer.readInt32BE(1);
      if (buffer.length < length + 1) return;
      const type = String.fromCharCode(buffer[0]);
      // A copy: the connection's buffer is reused for what comes next.
      const raw = Buffer.from(buffer.subarray(0, length + 1));
      connection.buffer = buffer.subarray(length + 1);
      if (type === 'X') {
        connection.socket.end();
        this.close(connection);
        return;
      }
      connection.pending.push(this.rewrite(connection, type, raw));
      if (GROUP_ENDS.has(type)) {
        this.enqueue({ connection, messages: connection.pending });
        connection.pending = [];
      }
    }
  }

  /** The message with its statement and portal names made the connection's own. */
  private rewrite(connection: Connection, type: string, raw: Buffer): Uint8Array {
    const body = raw.subarray(5);
    const prefix = namePrefix(connection.id);
    const own = (name: string) => (name === '' ? '' : prefix + name);
    switch (type) {
      case 'P': {
        const [name, next] = readCString(body, 0);
        if (name === '') return raw;
        connection.statements.add(own(name));
        return message(type, Buffer.concat([cString(own(name)), body.subarray(next)]));
      }
      case 'B': {
        const [portal, afterPortal] = readCString(body, 0);
        const [statement, next] = readCString(body, afterPortal);
        if (portal === '' && statement === '') return raw;
        return message(
          type,
          Buffer.concat([cString(own(portal)), cString(own(statement)), body.subarray(next)]),
        );
      }
      case 'E': {
        const [portal, next] = readCString(body, 0);
        if (portal === '') return raw;
        return message(type, Buffer.concat([cString(own(portal)), body.subarray(next)]));
      }
      case 'D':
      case 'C': {
        const [name, next] = readCString(body, 1);
        if (name === '') return raw;
        if (type === 'C' && body[0] === 0x53 /* S */) connection.statements.delete(own(name));
        return message(type, Buffer.concat([body.subarray(0, 1), cString(own(name)), body.subarray(next)]));
      }
      case 'Q': {
        const [sql] = readCString(body, 0);
        const listen = LISTEN.exec(sql);
        if (listen) connection.channels.add(listen[2]);
        const unlisten = UNLISTEN.exec(sql);
        if (unlisten) {
          if (unlisten[1] === '*') connection.channels.clear();
          else connection.channels.delete(unlisten[3]);
        }
        return raw;
      }
      default:
        return raw;
    }
  }

  private close(connection: Connection): void {
    if (connection.closed) return;
    connection.closed = true;
    this.connections.delete(connection);
    if (this.stopped) return;
    // What it queued has nobody to answer; its open transaction and statements must not linger.
    for (let index = this.queue.length - 1; index >= 0; index -= 1) {
      if (this.queue[index].connection === connection) this.queue.splice(index, 1);
    }
    const cleanup: Uint8Array[] = [];
    if (this.owner === connection) cleanup.push(simpleQuery('ROLLBACK'));
    // One query each: a name whose Parse never ran fails alone, not the others after it.
    for (const name of connection.statements) {
      cleanup.push(simpleQuery(`DEALLOCATE "${name.replaceAll('"', '""')}"`));
    }
    if (cleanup.length > 0) this.enqueue({ connection, messages: cleanup });
  }

  private enqueue(unit: Unit): void {
    if (this.stopped) return;
    this.queue.push(unit);
    this.kick();
  }

  /** Where the next unit to run is in the queue: the first, or the transaction owner's first. */
  private nextIndex(): number {
    if (this.queue.length === 0) return -1;
    return this.owner ? this.queue.findIndex((unit) => unit.connection === this.owner) : 0;
  }

  /** Starts the drain loop unless it runs, or nothing can run (the owner has sent nothing yet). */
  private kick(): void {
    if (this.running || this.stopped || this.nextIndex() < 0) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      // A unit queued after the loop's last look but before it ended.
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (let index = this.nextIndex(); index >= 0 && !this.stopped; index = this.nextIndex()) {
      const [unit] = this.queue.splice(index, 1);
      await this.execute(unit);
    }
  }

  private async execute({ connection, messages }: Unit): Promise<void> {
    const listening = [...this.connections].some((other) => other.channels.size > 0);
    const notifications = listening ? new NotificationScanner() : undefined;
    const { socket } = connection;
    try {
      await this.db.runExclusive(async () => {
        for (const [index, frontend] of messages.entries()) {
          await this.db.execProtocolRawStream(frontend, {
            // Once per unit: it ends where the client waits, so nothing it was told is unsynced.
            syncToFs: index === messages.length - 1,
            onRawData: (data: Uint8Array) => {
              // A copy: the bytes are a view of PGlite's memory, reused by the next message.
              const copy = Buffer.from(data);
              if (!connection.closed && socket.writable) socket.write(copy);
              notifications?.scan(copy);
            },
          });
        }
      });
    } catch {
      // PGlite answers SQL errors on the wire; a throw means the session itself failed.
      socket.destroy();
    }
    this.owner = this.db.isInTransaction() ? connection : null;
    // TRICKY: a connection whose close was handled while this unit awaited PGlite (its file sync
    // can wait on real I/O) got no ROLLBACK then, not being the owner yet: without one, a
    // transaction the unit left open would keep every other connection waiting for good.
    if (this.owner === connection && connection.closed) {
      this.queue.unshift({ connection, messages: [simpleQuery('ROLLBACK')] });
    }
    for (const notification of notifications?.found ?? []) this.forward(connection, notification);
  }

  private forward(sender: Connection, notification: Buffer): void {
    const [channel] = readCString(notification, 9);
    for (const connection of this.connections) {
      if (connection === sender || connection.closed || !connection.channels.has(channel)) continue;
      connection.socket.write(notification);
    }
  }
}

/** Picks the NotificationResponse messages out of a backend byte stream that starts at a message. */
class NotificationScanner {
  readonly found: Buffer[] = [];
  /** The bytes of the current message's header (type and length) read so far. */
  private header = Buffer.alloc(0);
  /** Body bytes of the current message still to come. */
  private remaining = 0;
  /** The current message's pieces, when it is a NotificationResponse. */
  private pieces: Buffer[] | null = null;

  scan(data: Buffer): void {
    let offset = 0;
    while (offset < data.length) {
      if (this.remaining === 0) {
        const take = Math.min(5 - this.header.length, data.length - offset);
        this.header = Buffer.concat([this.header, data.subarray(offset, offset + take)]);
        offset += take;
        if (this.header.length < 5) return;
        this.remaining = this.header.readInt32BE(1) - 4;
        this.pieces = this.header[0] === 0x41 /* A */ ? [this.header] : null;
        this.header = Buffer.alloc(0);
        if (this.remaining === 0) this.finish();
        continue;
      }
      const take = Math.min(this.remaining, data.length - offset);
      this.pieces?.push(data.subarray(offset, offset + take));
      this.remaining -= take;
      offset += take;
      if (this.remaining === 0) this.finish();
    }
  }

  private finish(): void {
    if (this.pieces) this.found.push(Buffer.concat(this.pieces));
    this.pieces = null;
  }
}

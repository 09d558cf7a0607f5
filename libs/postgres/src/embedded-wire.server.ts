import { createServer, type Server } from 'node:net';
import type { Duplex } from 'node:stream';
import { inProcessConnection } from './in-process-socket.util';
import type { PGlite } from '@electric-sql/pglite';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const QUERY = 0x51; // Q
const SYNC = 0x53; // S
const READY_FOR_QUERY = 0x5a; // Z
const ERROR_RESPONSE = 0x45; // E
const NOTIFICATION_RESPONSE = 0x41; // A
const COPY_IN_RESPONSE = 0x47; // G
const COPY_BOTH_RESPONSE = 0x57; // W

/** A start-up packet begins with its length, which PGlite (as Postgres) keeps far below 2^24. */
const isStartupPacket = (frontend: Uint8Array) => frontend[0] === 0;

/** Frontend messages after which a client waits: what a connection sends up to one runs as one unit. */
const GROUP_ENDS = new Set(['S', 'Q', 'H', 'c', 'f']);

/** Any other type ends a Postgres session with FATAL, and PGlite's proc_exit then hangs the process. */
const FRONTEND_TYPES = new Set(['B', 'C', 'D', 'E', 'F', 'H', 'P', 'Q', 'S', 'X', 'c', 'd', 'f']);

/** A connection's named statements and portals get this prefix: PGlite has one session for all. */
const namePrefix = (id: number) => `c${id}_`;

const LISTEN = /^\s*LISTEN\s+("?)([A-Za-z_][\w$]*)\1\s*;?\s*$/i;
const UNLISTEN = /^\s*UNLISTEN\s+(\*|("?)([A-Za-z_][\w$]*)\2)\s*;?\s*$/i;

class Connection {
  buffer: Buffer = Buffer.alloc(0);
  started = false;
  closed = false;
  pending: Uint8Array[] = [];
  readonly statements = new Set<string>();
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

export interface SessionLoss {
  reason: string;
  /** Never call into it again: its WASM runtime may spin forever. */
  db: PGlite;
}

interface EmscriptenModule {
  /** Called by Emscripten's abort() (a PANIC is one) before it throws; PGlite swallows the throw. */
  onAbort?: (what: unknown) => void;
}

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

const cString = (value: string) => Buffer.from(`${value}\0`, 'utf8');
const simpleQuery = (sql: string) => message('Q', cString(sql));

function readCString(body: Buffer, offset: number): [string, number] {
  const end = body.indexOf(0, offset);
  return [body.toString('utf8', offset, end), end + 1];
}

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
 * PGlite (one Postgres session) for many `pg` connections: units and transactions kept whole, named
 * statements per connection, LISTEN shared. A failed PGlite is never called again: it would spin forever.
 */
export class EmbeddedWireServer {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  /** Every socket, refused ones included: stop() must not wait for a client to hang up. */
  private readonly sockets = new Set<Duplex>();
  private readonly queue: Unit[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;
  /** The connection whose transaction is open: only its units run until it ends. */
  private owner: Connection | null = null;
  private nextId = 1;
  /** The session served now; null from a failure until `resume`. */
  private db: PGlite | null = null;
  private lostReason = '';
  private aborted: string | undefined;

  constructor(
    db: PGlite,
    private readonly maxConnections: number,
    private readonly onLost: (loss: SessionLoss) => void = () => undefined,
  ) {
    this.server = createServer((socket) => this.accept(socket));
    this.resume(db);
  }

  /** Serves `db` from now on: the PGlite reopened after the last one failed. */
  resume(db: PGlite): void {
    if (this.stopped) return;
    this.db = db;
    this.aborted = undefined;
    const module = db.Module as unknown as EmscriptenModule;
    module.onAbort = (what: unknown) => {
      if (this.db === db) this.aborted = String(what) || 'no reason given';
    };
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

  /** Resolves once the running unit has finished; nothing is rolled back: the session ends with PGlite. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    await this.running;
  }

  /** For `pg`'s `stream` option: no event-loop turn per round trip. */
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
    if (!this.db) {
      socket.end(
        fatal('57P03', `the embedded Postgres is being reopened after a failure (${this.lostReason})`),
      );
      return;
    }
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
      if (!FRONTEND_TYPES.has(type)) {
        connection.socket.end(fatal('08P01', `invalid frontend message type ${buffer[0]}`));
        this.close(connection);
        return;
      }
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
    if (this.stopped || !this.db) return;
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
    if (this.stopped || !this.db) return;
    this.queue.push(unit);
    this.kick();
  }

  private nextIndex(): number {
    if (this.queue.length === 0) return -1;
    return this.owner ? this.queue.findIndex((unit) => unit.connection === this.owner) : 0;
  }

  /** Starts the drain loop unless it runs, or nothing can run (the owner has sent nothing yet). */
  private kick(): void {
    if (this.running || this.stopped || !this.db || this.nextIndex() < 0) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      // A unit queued after the loop's last look but before it ended.
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (let index = this.nextIndex(); index >= 0 && !this.stopped && this.db; index = this.nextIndex()) {
      const [unit] = this.queue.splice(index, 1);
      await this.execute(unit);
    }
  }

  private async execute({ connection, messages }: Unit): Promise<void> {
    const { db } = this;
    if (!db) return;
    const listening = [...this.connections].some((other) => other.channels.size > 0);
    const answers = new BackendScanner(listening);
    const { socket } = connection;
    let failure: string | undefined;
    try {
      failure = await db.runExclusive(async () => {
        for (const [index, frontend] of messages.entries()) {
          answers.expectReady();
          await db.execProtocolRawStream(frontend, {
            // Once per unit: it ends where the client waits, so nothing it was told is unsynced.
            syncToFs: index === messages.length - 1,
            onRawData: (data: Uint8Array) => {
              // A copy: the bytes are a view of PGlite's memory, reused by the next message.
              const copy = Buffer.from(data);
              if (!connection.closed && socket.writable) socket.write(copy);
              answers.scan(copy);
            },
          });
          const failed = this.failureAfter(frontend, answers);
          if (failed) return failed;
        }
        return undefined;
      });
    } catch (error) {
      const thrown = error instanceof Error ? error.message : String(error);
      // A start-up packet PGlite cannot take (garbage, an unknown role) throws and leaves the
      // session as it was; anything else that throws is the session itself failing.
      failure = this.aborted
        ? this.failureAfter(messages[0], answers)
        : messages.some(isStartupPacket)
          ? undefined
          : `PGlite threw: ${thrown.split('\n')[0]}`;
      if (!failure) socket.destroy();
    }
    if (failure) {
      this.lose(failure);
      return;
    }
    this.owner = db.isInTransaction() ? connection : null;
    // TRICKY: a connection closed while this unit awaited PGlite got no ROLLBACK (it was not the owner
    // yet); a transaction the unit left open would otherwise block every other connection for good.
    if (this.owner === connection && connection.closed) {
      this.queue.unshift({ connection, messages: [simpleQuery('ROLLBACK')] });
    }
    for (const notification of answers.notifications) this.forward(connection, notification);
  }

  /** Why the session cannot go on after PGlite ran `frontend`, or undefined when it can. */
  private failureAfter(frontend: Uint8Array, answers: BackendScanner): string | undefined {
    if (answers.panic) return answers.panic;
    if (this.aborted) return `PGlite aborted (${this.aborted})`;
    // Postgres ends its answer to a start-up packet, a simple query and a Sync with ReadyForQuery
    // (unless a COPY now waits for the client's data): without one, the client would wait forever.
    const waits = isStartupPacket(frontend) || frontend[0] === QUERY || frontend[0] === SYNC;
    if (waits && !answers.ready && !answers.copying) {
      return `PGlite left a ${isStartupPacket(frontend) ? 'start-up packet' : String.fromCharCode(frontend[0])} message without an answer`;
    }
    return undefined;
  }

  /** Every connection ends (FATAL 57P02, as after a crash); new ones are refused until `resume`. */
  private lose(reason: string): void {
    const { db } = this;
    if (!db) return;
    this.db = null;
    this.lostReason = reason;
    this.owner = null;
    this.queue.length = 0;
    const goodbye = fatal(
      '57P02',
      `terminating connection because the embedded Postgres failed (${reason}); it is being reopened`,
    );
    for (const connection of this.connections) {
      connection.closed = true;
      connection.socket.end(goodbye);
    }
    this.connections.clear();
    this.onLost({ reason, db });
  }

  private forward(sender: Connection, notification: Buffer): void {
    const [channel] = readCString(notification, 9);
    for (const connection of this.connections) {
      if (connection === sender || connection.closed || !connection.channels.has(channel)) continue;
      connection.socket.write(notification);
    }
  }
}

/** Reads a backend byte stream across chunks: ReadyForQuery, a waiting COPY, a PANIC, notifications. */
class BackendScanner {
  readonly notifications: Buffer[] = [];
  ready = false;
  copying = false;
  panic: string | undefined;
  private header = Buffer.alloc(0);
  private type = 0;
  private remaining = 0;
  private pieces: Buffer[] | null = null;

  constructor(private readonly keepNotifications: boolean) {}

  expectReady(): void {
    this.ready = false;
  }

  scan(data: Buffer): void {
    let offset = 0;
    while (offset < data.length) {
      if (this.remaining === 0) {
        let header: Buffer;
        if (this.header.length === 0 && data.length - offset >= 5) {
          header = data.subarray(offset, offset + 5);
          offset += 5;
        } else {
          const take = Math.min(5 - this.header.length, data.length - offset);
          this.header = Buffer.concat([this.header, data.subarray(offset, offset + take)]);
          offset += take;
          if (this.header.length < 5) return;
          header = this.header;
          this.header = Buffer.alloc(0);
        }
        this.type = header[0];
        this.remaining = header.readInt32BE(1) - 4;
        const keep =
          this.type === ERROR_RESPONSE || (this.keepNotifications && this.type === NOTIFICATION_RESPONSE);
        this.pieces = keep ? [Buffer.from(header)] : null;
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
    switch (this.type) {
      case READY_FOR_QUERY:
        this.ready = true;
        break;
      case COPY_IN_RESPONSE:
      case COPY_BOTH_RESPONSE:
        this.copying = true;
        break;
      case NOTIFICATION_RESPONSE:
        if (this.pieces) this.notifications.push(Buffer.concat(this.pieces));
        break;
      case ERROR_RESPONSE:
        if (this.pieces && !this.panic) this.panic = panicOf(Buffer.concat(this.pieces));
        break;
    }
    this.pieces = null;
  }
}

/** `PANIC <code>: <message>` when the ErrorResponse `error` is a PANIC, else undefined. */
function panicOf(error: Buffer): string | undefined {
  const fields = new Map<string, string>();
  // Fields after the header: a type byte and a NUL-terminated value each, up to a lone NUL.
  for (let offset = 5; offset < error.length && error[offset] !== 0;) {
    const type = String.fromCharCode(error[offset]);
    const [value, next] = readCString(error, offset + 1);
    if (next <= offset) break; // No NUL after the value: not a well-formed field.
    fields.set(type, value);
    offset = next;
  }
  // V is the severity never translated; S may be (lc_messages).
  const severity = fields.get('V') ?? fields.get('S');
  return severity === 'PANIC' ? `PANIC ${fields.get('C') ?? ''}: ${fields.get('M') ?? ''}` : undefined;
}

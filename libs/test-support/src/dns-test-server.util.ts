import type { Socket } from 'node:net';

import { Packet, TCPServer, UDPServer, type DnsHandler } from 'dns2';

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, for `Resolver.setServers([address])` from `node:dns`. */
  address: string;
  /** Case-insensitive name; each value becomes one record. */
  setTxt(name: string, values: string[]): void;
  /** Every name answers NXDOMAIN again. */
  clear(): void;
  stop(): Promise<void>;
}

// NOTE: dns2 3.0.0 defines Packet.RCODE at runtime but not in its typings.
const RCODE_NXDOMAIN = 3;
const TXT_TTL_SECONDS = 60;
// A TXT string holds at most 255 bytes; longer values (DKIM keys) are split into chunks of one record.
const TXT_CHUNK_LENGTH = 255;
const PORT_ATTEMPTS = 10;

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function splitIntoCharacterStrings(value: string): string[] {
  if (value.length === 0) return [''];
  const chunks: string[] = [];
  for (let start = 0; start < value.length; start += TXT_CHUNK_LENGTH) {
    chunks.push(value.slice(start, start + TXT_CHUNK_LENGTH));
  }
  return chunks;
}

function closeUdp(server: UDPServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function closeTcp(server: TCPServer, connections: Set<Socket>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // close() waits for open connections, which dns2 keeps for a 10 s idle timeout.
  for (const socket of connections) socket.destroy();
  return closed;
}

function listenTcp(server: TCPServer, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Authoritative-only TXT on 127.0.0.1, UDP and TCP on one port (resolvers retry truncated answers over TCP). */
export async function startDnsTestServer(): Promise<DnsTestServer> {
  const txtRecords = new Map<string, string[]>();

  const handle: DnsHandler = (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const [question] = request.questions;
    const values = question ? txtRecords.get(normalizeName(question.name)) : undefined;
    if (!question || !values) {
      response.header.rcode = RCODE_NXDOMAIN;
    } else if (question.type === Packet.TYPE.TXT || question.type === Packet.TYPE.ANY) {
      for (const value of values) {
        response.answers.push(
          Packet.createResourceFromQuestion(question, {
            type: Packet.TYPE.TXT,
            class: Packet.CLASS.IN,
            ttl: TXT_TTL_SECONDS,
            data: splitIntoCharacterStrings(value),
          }),
        );
      }
    }
    // A known name of another type gets NODATA; a failed UDP send (client gone) does not matter.
    Promise.resolve(send(response)).catch(() => undefined);
  };

  const { udpServer, tcpServer, port } = await listenOnSharedPort(handle);
  const tcpConnections = new Set<Socket>();
  tcpServer.on('connection', (socket: Socket) => {
    tcpConnections.add(socket);
    socket.once('close', () => tcpConnections.delete(socket));
  });

  return {
    address: `127.0.0.1:${port}`,
    setTxt(name, values) {
      txtRecords.set(normalizeName(name), [...values]);
    },
    clear() {
      txtRecords.clear();
    },
    async stop() {
      await Promise.all([closeUdp(udpServer), closeTcp(tcpServer, tcpConnections)]);
    },
  };
}

async function listenOnSharedPort(
  handle: DnsHandler,
): Promise<{ udpServer: UDPServer; tcpServer: TCPServer; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
    const udpServer = new UDPServer(handle);
    udpServer.on('requestError', () => undefined);
    await udpServer.listen(0, '127.0.0.1');
    const { port } = udpServer.address();

    const tcpServer = new TCPServer(handle);
    tcpServer.on('requestError', () => undefined);
    try {
      await listenTcp(tcpServer, port);
      return { udpServer, tcpServer, port };
    } catch (error) {
      // The random UDP port may already be taken on TCP by an unrelated process: try another.
      lastError = error;
      await closeUdp(udpServer);
    }
  }
  throw new Error(`Could not bind the DNS test server to one port for both UDP and TCP`, {
    cause: lastError,
  });
}

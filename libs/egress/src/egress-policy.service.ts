import { lookup } from 'node:dns/promises';
import {
  classifyAddress,
  inNetwork,
  isLocalAddress,
  parseIpAddress,
  parseNetwork,
  type IpAddress,
} from './ip-address.util';
import { EgressRefusedError } from './egress.errors';
import { isRegisteredOwnPort } from './own-ports.store';

/** The setting that opens private networks; named in every refusal so an admin knows what to set. */
export const ALLOWED_NETWORKS_SETTING = 'EGRESS_ALLOWED_PRIVATE_NETWORKS';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface EgressPolicyOptions {
  /** Private networks (CIDRs or single addresses) that may be reached; none by default. */
  allowedPrivateNetworks?: readonly string[];
  /** Ports this server serves on (its config's), refused on its own addresses whatever is allowed. */
  ownPorts?: readonly number[];
  /** Default: the system resolver (`dns.lookup`, as Node's own connections use). */
  resolve?: HostResolver;
}

async function systemResolver(hostname: string): Promise<readonly ResolvedAddress[]> {
  const addresses = await lookup(hostname, { all: true, order: 'verbatim' });
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/**
 * Where the server's outgoing connections on behalf of users may go. The host is resolved once and
 * the connection made to a checked address, so DNS rebinding cannot slip between check and connect.
 */
export class EgressPolicy {
  private readonly networks: [IpAddress, number][];
  private readonly ownPorts: ReadonlySet<number>;
  private readonly resolver: HostResolver;

  constructor(options: EgressPolicyOptions = {}) {
    this.networks = (options.allowedPrivateNetworks ?? []).map((text) => {
      const network = parseNetwork(text);
      if (network === undefined) throw new Error(`not a network (CIDR or address): ${text}`);
      return network;
    });
    this.ownPorts = new Set(options.ownPorts ?? []);
    this.resolver = options.resolve ?? systemResolver;
  }

  static strict(): EgressPolicy {
    return new EgressPolicy();
  }

  refusal(address: IpAddress, port: number): 'own-port' | 'private' | undefined {
    if ((this.ownPorts.has(port) || isRegisteredOwnPort(port)) && isLocalAddress(address)) return 'own-port';
    if (classifyAddress(address).public) return undefined;
    return this.networks.some((network) => inNetwork(address, network)) ? undefined : 'private';
  }

  /** A name's first allowed address; EgressRefusedError when none may be reached, or for a socket path. */
  async resolve(host: string, port: number): Promise<ResolvedAddress> {
    const shown = host;
    if (host.trim() === '' || /[/\\]/.test(host) || host.startsWith('@')) {
      throw new EgressRefusedError(
        `${JSON.stringify(shown)} is not a network host: socket paths are refused`,
      );
    }
    const literal = parseIpAddress(host);
    const candidates: { parsed: IpAddress; resolved: ResolvedAddress }[] = [];
    if (literal !== undefined) {
      candidates.push({ parsed: literal, resolved: toResolved(literal) });
    } else {
      for (const resolved of await this.resolver(host)) {
        const parsed = parseIpAddress(resolved.address);
        if (parsed !== undefined) candidates.push({ parsed, resolved: toResolved(parsed) });
      }
    }
    let ownPort = false;
    for (const { parsed, resolved } of candidates) {
      const refusal = this.refusal(parsed, port);
      if (refusal === undefined) return resolved;
      ownPort ||= refusal === 'own-port';
    }
    if (candidates.length === 0) throw new Error(`${shown} did not resolve to any address`);
    throw new EgressRefusedError(
      ownPort
        ? `${shown} port ${port} is this server's own; requests to the server itself are refused`
        : `${shown} resolves to a private address; set ${ALLOWED_NETWORKS_SETTING} to allow it`,
    );
  }
}

function toResolved(address: IpAddress): ResolvedAddress {
  return { address: address.toString(), family: address.kind() === 'ipv4' ? 4 : 6 };
}

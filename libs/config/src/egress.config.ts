import { isIP } from 'node:net';
import { ConfigError, type Environment, readPort, readString } from './env.util';

/** Public addresses always; private ones only inside these networks; the server's own ports never. */
export interface EgressConfig {
  /** EGRESS_ALLOWED_PRIVATE_NETWORKS: comma-separated CIDRs or addresses, e.g. `10.0.0.0/8,127.0.0.1/32`. */
  allowedPrivateNetworks: string[];
  /** The services' ports, refused on this machine's own addresses even inside an allowed network. */
  ownPorts: number[];
}

const SETTING = 'EGRESS_ALLOWED_PRIVATE_NETWORKS';

export function loadEgressConfig(env: Environment = process.env): EgressConfig {
  const allowedPrivateNetworks = (readString(env, SETTING) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map(readNetwork);
  const ownPorts = [
    readPort(env, 'MANAGEMENT_PORT', 8000),
    readPort(env, 'CAPTURE_PORT', 8010),
    readPort(env, 'INGESTION_PORT', 8020),
    readPort(env, 'WORKERS_PORT', 8030),
  ].filter((port) => port !== 0);
  return { allowedPrivateNetworks, ownPorts };
}

/** `a.b.c.d[/n]` or `ipv6[/n]`, strictly (`10/8` is refused rather than read as 0.0.0.10/8). */
function readNetwork(entry: string): string {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  const maxBits = family === 6 ? 128 : 32;
  const valid =
    family !== 0 &&
    rest.length === 0 &&
    (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits));
  if (!valid) {
    throw new ConfigError(
      SETTING,
      entry,
      'each entry must be a CIDR such as 10.0.0.0/8 or fd00::/8, or an IP address',
    );
  }
  return bits === undefined ? `${address}/${maxBits}` : `${address}/${Number(bits)}`;
}

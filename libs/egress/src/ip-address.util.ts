import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** Public, or the special-purpose range that makes an address not one (`loopback`, `private`, ...). */
export type AddressClass = { public: true } | { public: false; range: string };

const PUBLIC: AddressClass = { public: true };
/** IPv6 global unicast: everything outside it is reserved, whatever ipaddr.js names it. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * Any spelling a socket accepts, else undefined (a host name): also inet_aton's (`127.1`, `0x7f.1`,
 * `2130706433`), which Node's connect accepts, and IPv6 in brackets or with a zone.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return undefined;
  // TRICKY: ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`; a socket reads it as the IPv4-compatible
  // `::a.b.c.d` (another address), and the check must judge the address the socket would use.
  const compatible = /^::(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare);
  if (compatible !== null) {
    const [a, b, c, d] = compatible.slice(1).map(Number);
    return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, (a << 8) | b, (c << 8) | d]);
  }
  return ipaddr.parse(bare);
}

/** The IPv4 address an IPv6 form stands for (mapped, SIIT, NAT64, 6to4, IPv4-compatible). */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const parts = address.parts;
  const low = (high: number, lowPart: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, lowPart >> 8, lowPart & 0xff]);
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64_WELL_KNOWN)) {
    return low(parts[6], parts[7]);
  }
  if (range === '6to4') return low(parts[1], parts[2]);
  if (parts.slice(0, 6).every((part) => part === 0) && range === 'unicast') return low(parts[6], parts[7]);
  return undefined;
}

/** Outside every IANA special-purpose range; an IPv6 form of an IPv4 address is judged by that address. */
export function classifyAddress(address: IpAddress): AddressClass {
  if (address.kind() === 'ipv4') {
    const range = address.range();
    return range === 'unicast' ? PUBLIC : { public: false, range };
  }
  const ipv6 = address as ipaddr.IPv6;
  const inner = embeddedIPv4(ipv6);
  if (inner !== undefined) {
    const range = ipv6.range();
    // NOTE: `::a.b.c.d` is deprecated (RFC 4291) and routed nowhere public: refused whatever it holds.
    if (range === 'unicast') return { public: false, range: 'ipv4Compatible' };
    const innerClass = classifyAddress(inner);
    return innerClass.public ? PUBLIC : { public: false, range: `${innerClass.range} (${range})` };
  }
  const range = ipv6.range();
  if (range !== 'unicast') return { public: false, range };
  return ipv6.match(GLOBAL_UNICAST) ? PUBLIC : { public: false, range: 'reserved' };
}

/** What CIDRs are matched against: the address and the IPv4 address it stands for. */
export function addressForms(address: IpAddress): IpAddress[] {
  if (address.kind() === 'ipv4') return [address];
  const inner = embeddedIPv4(address as ipaddr.IPv6);
  return inner === undefined ? [address] : [address, inner];
}

export function inNetwork(address: IpAddress, network: [IpAddress, number]): boolean {
  return addressForms(address).some(
    (form) => form.kind() === network[0].kind() && form.match(network[0], network[1]),
  );
}

/** Whether a socket to it ends on this machine (connecting to 0.0.0.0 or :: reaches the local host). */
export function isLocalAddress(address: IpAddress): boolean {
  const forms = addressForms(address);
  if (forms.some((form) => ['loopback', 'unspecified'].includes(form.range()))) return true;
  const normalized = new Set(forms.map((form) => form.toNormalizedString()));
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      const local = parseIpAddress(entry.address);
      if (
        local !== undefined &&
        addressForms(local).some((form) => normalized.has(form.toNormalizedString()))
      ) {
        return true;
      }
    }
  }
  return false;
}

/** A CIDR or one address; IPv4 must be four decimal parts (`10/8` would read as 0.0.0.10/8). */
export function parseNetwork(text: string): [IpAddress, number] | undefined {
  const [address, bits, ...rest] = text.trim().split('/');
  if (address === undefined || rest.length > 0) return undefined;
  const isIPv4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!isIPv4 && !(address.includes(':') && ipaddr.IPv6.isValid(address))) return undefined;
  const parsed = ipaddr.parse(address);
  if (bits === undefined) return [parsed, isIPv4 ? 32 : 128];
  const length = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(length >= 0 && length <= (isIPv4 ? 32 : 128))) return undefined;
  return [parsed, length];
}

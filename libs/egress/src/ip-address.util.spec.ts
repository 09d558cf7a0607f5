import ipaddr from 'ipaddr.js';
import { classifyAddress, embeddedIPv4, parseIpAddress, parseNetwork } from './ip-address.util';

function classify(text: string) {
  const address = parseIpAddress(text);
  if (address === undefined) throw new Error(`not an address: ${text}`);
  return classifyAddress(address);
}

describe('parseIpAddress', () => {
  it.each([
    ['2130706433', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['[::1]', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
  ])('reads %s as %s, as a socket would', (text, expected) => {
    expect(parseIpAddress(text)?.toString()).toBe(expected);
  });

  it.each(['localhost', 'example.com', '1.2.3.4.5', '', 'db.internal'])(
    'takes %j for a host name',
    (text) => {
      expect(parseIpAddress(text)).toBeUndefined();
    },
  );
});

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['64:ff9b:1::1', 'rfc6052'],
    ['2001::1', 'teredo'],
  ])('refuses %s as %s', (text, range) => {
    expect(classify(text)).toEqual({ public: false, range });
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback (ipv4Mapped)'],
    ['::ffff:7f00:1', 'loopback (ipv4Mapped)'],
    ['::ffff:10.0.0.1', 'private (ipv4Mapped)'],
    ['::ffff:169.254.169.254', 'linkLocal (ipv4Mapped)'],
    ['::ffff:0:127.0.0.1', 'loopback (rfc6145)'],
    ['64:ff9b::127.0.0.1', 'loopback (rfc6052)'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal (rfc6052)'],
    ['2002:7f00:1::', 'loopback (6to4)'],
    ['2002:c0a8:101::1', 'private (6to4)'],
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
  ])('refuses the IPv6 form %s of a non-public IPv4 address (%s)', (text, range) => {
    expect(classify(text)).toEqual({ public: false, range });
  });

  it('refuses IPv6 outside global unicast 2000::/3', () => {
    expect(classify('4000::1')).toEqual({ public: false, range: 'reserved' });
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('lets public %s through', (text) => {
    expect(classify(text)).toEqual({ public: true });
  });
});

describe('embeddedIPv4', () => {
  it('finds the IPv4 address of the mapped, NAT64 and 6to4 forms', () => {
    const forms = ['::ffff:10.0.0.1', '64:ff9b::a00:1', '2002:a00:1::'].map((text) => {
      const address = parseIpAddress(text);
      return address instanceof ipaddr.IPv6 ? embeddedIPv4(address)?.toString() : undefined;
    });
    expect(forms).toEqual(['10.0.0.1', '10.0.0.1', '10.0.0.1']);
  });
});

describe('parseNetwork', () => {
  it.each([
    ['10.0.0.0/8', '10.0.0.0', 8],
    ['127.0.0.1/32', '127.0.0.1', 32],
    ['127.0.0.1', '127.0.0.1', 32],
    ['fd00::/8', 'fd00::', 8],
    ['::1', '::1', 128],
  ])('reads %s', (text, address, bits) => {
    const network = parseNetwork(text);
    expect([network?.[0].toString(), network?.[1]]).toEqual([address, bits]);
  });

  it.each(['10/8', '10.0.0.0/33', 'fd00::/129', 'localhost', '10.0.0.0/8/1', '', '0x7f.1/8', '10.0.0.0/x'])(
    'refuses %j',
    (text) => {
      expect(parseNetwork(text)).toBeUndefined();
    },
  );
});

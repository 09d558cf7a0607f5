import { EgressRefusedError, egressRefusalOf } from './egress.errors';
import { EgressPolicy, type HostResolver } from './egress-policy.service';
import { parseIpAddress } from './ip-address.util';
import { registerOwnPort } from './own-ports.store';

/** A resolver answering from a table, so that no test depends on the machine's DNS. */
function resolverOf(table: Record<string, string[]>): HostResolver {
  return (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

const PRIVATE_MESSAGE = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';

describe('EgressPolicy.resolve', () => {
  const strict = new EgressPolicy({
    resolve: resolverOf({
      localhost: ['::1', '127.0.0.1'],
      'metadata.example': ['169.254.169.254'],
      'public.example': ['93.184.216.34'],
      'mixed.example': ['10.0.0.5', '93.184.216.34'],
    }),
  });

  it.each([
    '127.0.0.1',
    '2130706433',
    '0x7f.1',
    '127.1',
    '0.0.0.0',
    'localhost',
    '[::1]',
    '::1',
    '[::ffff:127.0.0.1]',
    '169.254.169.254',
    'metadata.example',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.1',
    '100.64.1.1',
    '[fd00::1]',
    '[fe80::1]',
    '[64:ff9b::7f00:1]',
  ])('refuses %s with the same message whatever the port', async (host) => {
    for (const port of [1, 5432, 8000]) {
      await expect(strict.resolve(host, port)).rejects.toThrow(
        new EgressRefusedError(`${host} ${PRIVATE_MESSAGE}`),
      );
    }
  });

  it.each(['/var/run/postgresql', '/tmp', '@abstract', 'host/path', 'C:\\pipe', '', ' '])(
    'refuses the socket path or empty host %j',
    async (host) => {
      await expect(strict.resolve(host, 5432)).rejects.toThrow(/socket paths are refused/);
    },
  );

  it('connects a public name to its checked address', async () => {
    await expect(strict.resolve('public.example', 443)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('takes the first allowed address of a name that also resolves to a private one', async () => {
    await expect(strict.resolve('mixed.example', 443)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('answers a public IP literal as it is, in its canonical spelling', async () => {
    await expect(strict.resolve('[2606:4700::1111]', 443)).resolves.toEqual({
      address: '2606:4700::1111',
      family: 6,
    });
  });

  it('lets an unresolvable name fail as a resolver error, not as a refusal', async () => {
    const failure = await strict.resolve('nowhere.example', 80).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(egressRefusalOf(failure)).toBeUndefined();
  });

  it('checks the address of every lookup, so a name rebound to loopback is refused', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    const rebinding = new EgressPolicy({
      resolve: () =>
        Promise.resolve((answers.shift() ?? []).map((address) => ({ address, family: 4 as const }))),
    });
    await expect(rebinding.resolve('rebind.example', 80)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(rebinding.resolve('rebind.example', 80)).rejects.toThrow(
      `rebind.example ${PRIVATE_MESSAGE}`,
    );
  });
});

describe('EgressPolicy with allowed private networks', () => {
  const policy = new EgressPolicy({
    allowedPrivateNetworks: ['10.0.0.0/8', '127.0.0.1/32', 'fd00::/8'],
    ownPorts: [8000, 8010],
    resolve: resolverOf({ localhost: ['127.0.0.1'], 'db.internal': ['10.1.2.3'] }),
  });

  it('lets the allowed networks through, in their IPv6 forms too', async () => {
    await expect(policy.resolve('10.1.2.3', 5432)).resolves.toEqual({ address: '10.1.2.3', family: 4 });
    await expect(policy.resolve('db.internal', 5432)).resolves.toEqual({ address: '10.1.2.3', family: 4 });
    await expect(policy.resolve('127.0.0.1', 9000)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(policy.resolve('[::ffff:127.0.0.1]', 9000)).resolves.toEqual({
      address: '::ffff:7f00:1',
      family: 6,
    });
    await expect(policy.resolve('[fd00::5]', 80)).resolves.toEqual({ address: 'fd00::5', family: 6 });
  });

  it('still refuses what is outside them', async () => {
    await expect(policy.resolve('127.0.0.2', 9000)).rejects.toThrow(`127.0.0.2 ${PRIVATE_MESSAGE}`);
    await expect(policy.resolve('192.168.1.1', 80)).rejects.toThrow(`192.168.1.1 ${PRIVATE_MESSAGE}`);
    await expect(policy.resolve('169.254.169.254', 80)).rejects.toThrow(EgressRefusedError);
  });

  it("refuses the server's own ports on its own addresses even where the network is allowed", async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '0.0.0.0', '2130706433']) {
      await expect(policy.resolve(host, 8000)).rejects.toThrow(
        `${host} port 8000 is this server's own; requests to the server itself are refused`,
      );
    }
    // Another machine's port 8000 in an allowed network is not the server's own.
    await expect(policy.resolve('10.1.2.3', 8000)).resolves.toEqual({ address: '10.1.2.3', family: 4 });
  });

  it('refuses the ports registered at run time, until they are released', async () => {
    const release = registerOwnPort(43_210);
    await expect(policy.resolve('127.0.0.1', 43_210)).rejects.toThrow(/is this server's own/);
    release();
    await expect(policy.resolve('127.0.0.1', 43_210)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('refuses a network it cannot read', () => {
    expect(() => new EgressPolicy({ allowedPrivateNetworks: ['10/8'] })).toThrow(
      'not a network (CIDR or address): 10/8',
    );
  });
});

describe('EgressPolicy.refusal', () => {
  it('refuses a private address and allows a public one', () => {
    const policy = EgressPolicy.strict();
    expect(policy.refusal(parseIpAddress('10.0.0.1')!, 80)).toBe('private');
    expect(policy.refusal(parseIpAddress('8.8.8.8')!, 80)).toBeUndefined();
  });
});

describe('egressRefusalOf', () => {
  it('finds the refusal inside the errors that wrap it', () => {
    const refusal = new EgressRefusedError('no');
    expect(egressRefusalOf(new TypeError('fetch failed', { cause: refusal }))).toBe(refusal);
    expect(egressRefusalOf(new Error('other'))).toBeUndefined();
  });
});

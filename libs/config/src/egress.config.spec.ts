import { loadAppsRuntimeConfig } from './apps.config';
import { loadEgressConfig } from './egress.config';
import { loadManagementConfig } from './management.config';
import { loadStandaloneConfig } from './standalone.config';
import { loadWorkersConfig } from './workers.config';

describe('loadEgressConfig', () => {
  it('allows no private network by default and knows the services’ ports', () => {
    expect(loadEgressConfig({})).toEqual({ allowedPrivateNetworks: [], ownPorts: [8000, 8010, 8020, 8030] });
  });

  it('reads EGRESS_ALLOWED_PRIVATE_NETWORKS as CIDRs, a bare address as one host', () => {
    const config = loadEgressConfig({
      EGRESS_ALLOWED_PRIVATE_NETWORKS: ' 10.0.0.0/8, 127.0.0.1 ,fd00::/8,,::1',
      MANAGEMENT_PORT: '9000',
      CAPTURE_PORT: '0',
    });
    expect(config).toEqual({
      allowedPrivateNetworks: ['10.0.0.0/8', '127.0.0.1/32', 'fd00::/8', '::1/128'],
      ownPorts: [9000, 8020, 8030],
    });
  });

  it.each(['10/8', '10.0.0.0/33', 'localhost', '0x7f.1', '10.0.0.0/8/8', 'fd00::/200'])(
    'stops on the entry %j with the setting named',
    (entry) => {
      expect(() => loadEgressConfig({ EGRESS_ALLOWED_PRIVATE_NETWORKS: `10.0.0.0/8,${entry}` })).toThrow(
        `EGRESS_ALLOWED_PRIVATE_NETWORKS=${entry}: each entry must be a CIDR such as 10.0.0.0/8 or fd00::/8, or an IP address`,
      );
    },
  );

  it('is part of the configs of everything that makes requests for users', () => {
    const env = { EGRESS_ALLOWED_PRIVATE_NETWORKS: '10.0.0.0/8', DATA_DIR: '/srv/hogbase' };
    const expected = ['10.0.0.0/8'];
    expect(loadAppsRuntimeConfig(env).egress.allowedPrivateNetworks).toEqual(expected);
    expect(loadWorkersConfig(env).egress.allowedPrivateNetworks).toEqual(expected);
    expect(loadManagementConfig(env).egress.allowedPrivateNetworks).toEqual(expected);
    const standalone = loadStandaloneConfig(env);
    expect(standalone.workers.egress.allowedPrivateNetworks).toEqual(expected);
    expect(standalone.ingestion.apps.egress.allowedPrivateNetworks).toEqual(expected);
    expect(standalone.management.egress.allowedPrivateNetworks).toEqual(expected);
  });
});

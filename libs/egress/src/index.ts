export {
  ALLOWED_NETWORKS_SETTING,
  EgressPolicy,
  EgressRefusedError,
  egressRefusalOf,
  type EgressPolicyOptions,
  type HostResolver,
  type ResolvedAddress,
} from './egress.policy';
export {
  createEgressFetch,
  egressDispatcher,
  type EgressFetch,
  type EgressFetchOptions,
} from './egress-fetch.util';
export { createEgressAgents, type EgressAgents } from './egress-agents.util';
export { registerOwnPort } from './own-ports.registry';
export {
  classifyAddress,
  embeddedIPv4,
  isLocalAddress,
  parseIpAddress,
  parseNetwork,
  type AddressClass,
  type IpAddress,
} from './ip-address.util';

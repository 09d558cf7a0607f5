export { EgressPolicy } from './egress-policy.service';
export { egressRefusalOf } from './egress.errors';
export { createEgressFetch, type EgressFetch } from './egress-fetch.util';
export { createEgressAgents } from './egress-agents.util';
export { registerOwnPort } from './own-ports.store';
export { parseIpAddress } from './ip-address.util';

import http from 'node:http';
import https, { type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { EgressRefusedError } from './egress.errors';
import type { EgressPolicy } from './egress-policy.service';

type ConnectionCallback = (error: Error | null, stream: Duplex) => void;

/** Connects to the address the policy checked, keeping the host as TLS server name for certificates. */
function checkedConnection(
  policy: EgressPolicy,
  options: RequestOptions,
  callback: ConnectionCallback,
  defaultPort: number,
  create: (options: RequestOptions) => Duplex | null | undefined,
): undefined {
  // The agent ignores the stream of a failure.
  const fail = (error: unknown) =>
    (callback as (error: Error) => void)(error instanceof Error ? error : new Error(String(error)));
  if (options.socketPath) {
    fail(new EgressRefusedError('socket paths are refused'));
    return undefined;
  }
  const host = options.host ?? options.hostname ?? 'localhost';
  const port = Number(options.port) || defaultPort;
  policy.resolve(host, port).then((target) => {
    let socket: Duplex | null | undefined;
    try {
      socket = create({
        ...options,
        host: target.address,
        hostname: target.address,
        servername: options.servername ?? (isIP(host) === 0 ? host : undefined),
      });
    } catch (error) {
      fail(error);
      return;
    }
    if (socket) callback(null, socket);
    else fail(new Error(`no connection to ${host}:${port}`));
  }, fail);
  return undefined;
}

function withCheckedConnections<Agent extends http.Agent>(
  agent: Agent,
  policy: EgressPolicy,
  defaultPort: number,
): Agent {
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (options: RequestOptions, callback?: ConnectionCallback): undefined =>
    checkedConnection(policy, options, callback ?? (() => undefined), defaultPort, create);
  return agent;
}

export interface EgressAgents {
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
}

/** For clients built on `node:http`, such as the AWS SDK's NodeHttpHandler. Destroy them with the client. */
export function createEgressAgents(policy: EgressPolicy, options: https.AgentOptions = {}): EgressAgents {
  return {
    httpAgent: withCheckedConnections(new http.Agent(options), policy, 80),
    httpsAgent: withCheckedConnections(new https.Agent(options), policy, 443),
  };
}

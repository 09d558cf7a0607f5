#!/usr/bin/env node
// @ts-check
// Checks docker/compose.yaml against the image's contract: commands and settings, start order after
// migrate and healthy dependencies, distinct ports, no written secret, hardened containers; plus
// docker-compose's offline `config` validation when installed.
//   node tools/deploy/check-compose.mjs [path/to/compose.yaml]   # exits 1 and lists the problems
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
// `yaml` is the copy nx and cosmiconfig bring (v1); only parse(text, { merge }), which v1 and v2 share.
import YAML from 'yaml';

/**
 * @typedef {import('./compose.types.d.ts').ComposeFile} ComposeFile
 * @typedef {import('./compose.types.d.ts').ComposeService} ComposeService
 * @typedef {import('./compose.types.d.ts').ComposeScalar} ComposeScalar
 */

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DEFAULT_COMPOSE_FILE = path.join(REPO_ROOT, 'docker/compose.yaml');

export const IMAGE = 'hogbase/hogbase';
/** The ENTRYPOINT takes one as the container's first argument. */
export const IMAGE_COMMANDS = ['management', 'capture', 'ingestion', 'workers', 'migrate', 'admin'];
/** @type {Record<string, number>} */
export const SERVICE_PORTS = { management: 8000, capture: 8010, ingestion: 8020, workers: 8030 };

const CLICKHOUSE = ['CLICKHOUSE_URL', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_DATABASE'];
/** @type {Record<string, string[]>} */
export const REQUIRED_SETTINGS = {
  management: ['DATABASE_URL', 'ENCRYPTION_KEYS', ...CLICKHOUSE],
  capture: ['DATABASE_URL', 'KAFKA_BROKERS'],
  ingestion: ['DATABASE_URL', 'KAFKA_BROKERS', 'ENCRYPTION_KEYS', ...CLICKHOUSE],
  workers: ['DATABASE_URL', 'KAFKA_BROKERS', 'ENCRYPTION_KEYS', ...CLICKHOUSE],
  migrate: ['DATABASE_URL', 'KAFKA_BROKERS', ...CLICKHOUSE],
};

/** Only ever a reference to the environment, never defaulted. */
const SECRET_SETTINGS = ['ENCRYPTION_KEYS', 'CLICKHOUSE_PASSWORD', 'POSTGRES_PASSWORD', 'SMTP_URL'];
/** An empty value is "unset" to the config. */
const OPTIONAL_SECRETS = ['SMTP_URL'];
const SECRET_NAME = /PASSWORD|SECRET|TOKEN|ENCRYPTION_KEYS|SMTP_URL|PRIVATE_KEY/;
const REQUIRED_REFERENCE = /^\$\{[A-Z0-9_]+:?\?[^}]*\}$/;
const EMPTY_REFERENCE = /^\$\{[A-Z0-9_]+(:?-)?\}$/;

/**
 * Enough to read ports and hosts: defaults taken, required ones named.
 * @param {unknown} value
 * @param {Record<string, string | undefined>} [env]
 */
export function interpolate(value, env = {}) {
  return String(value)
    .replace(/\$\$/g, '\u0000')
    .replace(
      /\$\{([A-Za-z0-9_]+)(?:(:?[-?])([^}]*))?\}/g,
      (
        /** @type {string} */ _match,
        /** @type {string} */ name,
        /** @type {string | undefined} */ operator,
        /** @type {string} */ argument,
      ) => {
        const set = env[name];
        if (operator === ':-' || operator === '-') {
          const useDefault = operator === ':-' ? !set : set === undefined;
          return useDefault ? argument : /** @type {string} */ (set);
        }
        if (operator === ':?' || operator === '?') return set || `<${name}>`;
        return set ?? '';
      },
    )
    .replace(/\u0000/g, '$');
}

/**
 * @template T
 * @param {T | T[] | undefined | null} value
 * @returns {T[]}
 */
function asList(value) {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * @param {ComposeService} service
 * @returns {Record<string, ComposeScalar | undefined>}
 */
function environmentOf(service) {
  const environment = service.environment ?? {};
  if (!Array.isArray(environment)) return environment;
  return Object.fromEntries(
    environment.map((entry) => {
      const index = entry.indexOf('=');
      return index < 0 ? [entry, undefined] : [entry.slice(0, index), entry.slice(index + 1)];
    }),
  );
}

/** @param {ComposeService} service */
function commandOf(service) {
  const command = service.command;
  if (command === undefined) return [];
  return Array.isArray(command) ? command.map(String) : String(command).trim().split(/\s+/);
}

/**
 * @param {ComposeService} service
 * @returns {Record<string, string>}
 */
function dependsOn(service) {
  const dependencies = service.depends_on ?? {};
  if (Array.isArray(dependencies)) {
    return Object.fromEntries(dependencies.map((name) => [name, 'service_started']));
  }
  return Object.fromEntries(
    Object.entries(dependencies).map(([name, spec]) => [name, spec?.condition ?? 'service_started']),
  );
}

/**
 * Short ("ip:host:container") or long syntax.
 * @param {ComposeService} service
 * @returns {{ hostIp: string, published: string, target: number }[]}
 */
function publishedPorts(service) {
  return asList(service.ports).map((port) => {
    if (typeof port === 'object') {
      return {
        hostIp: port.host_ip ? interpolate(port.host_ip) : '',
        published: port.published === undefined ? '' : interpolate(port.published),
        target: Number(interpolate(port.target)),
      };
    }
    const parts = interpolate(port)
      .replace(/\/(tcp|udp)$/, '')
      .split(':');
    const target = Number(parts.pop());
    const published = parts.pop() ?? '';
    return { hostIp: parts.join(':'), published, target };
  });
}

/** @param {string | undefined} duration */
function seconds(duration) {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(String(duration ?? ''));
  return match ? Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0) : Number.NaN;
}

/**
 * The services that a URL or `host:port` list points at.
 * @param {ComposeScalar | undefined} value
 * @param {string[]} serviceNames
 */
function serviceHosts(value, serviceNames) {
  const hosts = String(value ?? '')
    .split(',')
    .map((part) => {
      const text = part.trim();
      try {
        return new URL(text.includes('://') ? text : `tcp://${text}`).hostname;
      } catch {
        return '';
      }
    });
  return hosts.filter((host) => serviceNames.includes(host));
}

/**
 * @param {string} name
 * @param {Record<string, ComposeScalar | undefined>} environment
 * @param {string[]} problems
 */
function checkSecrets(name, environment, problems) {
  for (const [key, raw] of Object.entries(environment)) {
    if (raw === undefined || raw === null) continue;
    const value = String(raw);
    if (SECRET_SETTINGS.includes(key) || (SECRET_NAME.test(key) && key !== 'DATABASE_URL')) {
      const allowed = OPTIONAL_SECRETS.includes(key)
        ? REQUIRED_REFERENCE.test(value) || EMPTY_REFERENCE.test(value)
        : REQUIRED_REFERENCE.test(value);
      if (!allowed) {
        problems.push(
          `${name}: ${key} must be a reference without a default (\${${key}:?…}${
            OPTIONAL_SECRETS.includes(key) ? ` or \${${key}:-}` : ''
          }), not ${JSON.stringify(value.slice(0, 40))}`,
        );
      }
    }
    // A URL's password is a secret too. References first: their messages may hold `/` and `@`.
    /** @type {string[]} */
    const references = [];
    const masked = value.replace(
      /\$\{[^}]*\}/g,
      (reference) => `\u0001${references.push(reference) - 1}\u0001`,
    );
    const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^@/]*)@/i.exec(masked)?.[1];
    if (userinfo?.includes(':')) {
      const password = userinfo
        .slice(userinfo.indexOf(':') + 1)
        .replace(
          /\u0001(\d+)\u0001/g,
          (/** @type {string} */ _match, /** @type {string} */ index) => references[Number(index)],
        );
      if (!REQUIRED_REFERENCE.test(password)) {
        problems.push(`${name}: the password in ${key} must be a \${NAME:?…} reference`);
      }
    }
  }
}

/**
 * @param {string} name
 * @param {ComposeService} service
 * @param {string} command
 * @param {string[]} problems
 */
function checkHardening(name, service, command, problems) {
  if (service.read_only !== true) problems.push(`${name}: read_only: true is missing`);
  const user = String(service.user ?? '');
  const [uid, gid] = user.split(':');
  if (!/^\d+$/.test(uid ?? '') || Number(uid) === 0 || (gid !== undefined && !/^\d+$/.test(gid))) {
    problems.push(`${name}: user must be a numeric non-root uid:gid, not ${JSON.stringify(user)}`);
  }
  if (!asList(service.cap_drop).includes('ALL')) problems.push(`${name}: cap_drop: [ALL] is missing`);
  if (!asList(service.security_opt).some((option) => /^no-new-privileges(:true)?$/.test(option))) {
    problems.push(`${name}: security_opt no-new-privileges:true is missing`);
  }
  if (asList(service.cap_add).length > 0) problems.push(`${name}: cap_add is not allowed`);
  if (service.privileged) problems.push(`${name}: privileged is not allowed`);
  const tmpfs = asList(service.tmpfs).map((entry) => String(entry).split(':')[0]);
  const mounts = asList(service.volumes).map((volume) =>
    typeof volume === 'object' ? volume.target : String(volume).split(':')[1],
  );
  if (!tmpfs.includes('/tmp') && !mounts.includes('/tmp')) problems.push(`${name}: no writable /tmp`);
  if (!mounts.includes('/data') && !tmpfs.includes('/data')) problems.push(`${name}: no volume on /data`);
  if (command in SERVICE_PORTS) {
    // The drain takes up to ~15 s: Docker's default 10 s would kill a service mid-drain.
    if (!(seconds(service.stop_grace_period) >= 30)) {
      problems.push(`${name}: stop_grace_period must be at least 30s`);
    }
    const test = asList(service.healthcheck?.test).map(String);
    const port = SERVICE_PORTS[command];
    if (!test.includes('node') || !test.some((part) => part.includes(`:${port}/_ready`))) {
      problems.push(`${name}: healthcheck must ask /_ready on :${port} with node (the image has no curl)`);
    }
  }
}

/**
 * Resolves to the problems found; `validate` also runs docker-compose's validation when installed.
 * @returns {Promise<string[]>}
 */
export async function checkCompose(file = DEFAULT_COMPOSE_FILE, { validate = true } = {}) {
  const text = await readFile(file, 'utf8');
  const compose = /** @type {ComposeFile} */ (parseYaml(text));
  /** @type {string[]} */
  const problems = [];
  if ('version' in compose) problems.push('the `version` key is obsolete in the Compose spec');
  const services = compose.services ?? {};
  const names = Object.keys(services);

  const ours = names.filter((name) => String(services[name].image ?? '').startsWith(`${IMAGE}:`));
  /** @type {Record<string, string[]>} */
  const byCommand = {};
  for (const name of ours) {
    const service = services[name];
    const build = service.build ?? {};
    if (
      build.dockerfile !== 'docker/Dockerfile' ||
      path.resolve(path.dirname(file), build.context ?? '.') !== path.resolve(path.dirname(file), '..')
    ) {
      problems.push(
        `${name}: build must be { context: .., dockerfile: docker/Dockerfile } (the repository root)`,
      );
    }
    const [command, ...args] = commandOf(service);
    if (!IMAGE_COMMANDS.includes(command)) {
      problems.push(
        `${name}: command ${JSON.stringify(command)} is not one of the image's (${IMAGE_COMMANDS.join(', ')})`,
      );
      continue;
    }
    if (command === 'migrate' && args.includes('--wait')) {
      problems.push(`${name}: migrate --wait applies nothing; compose's migrate step must apply`);
    }
    (byCommand[command] ??= []).push(name);
    const environment = environmentOf(service);
    for (const setting of REQUIRED_SETTINGS[command] ?? []) {
      if (!environment[setting]) problems.push(`${name}: ${command} needs ${setting}`);
    }
    for (const setting of ['DATABASE_URL', 'KAFKA_BROKERS', 'CLICKHOUSE_URL']) {
      const value = environment[setting];
      if (value && serviceHosts(interpolate(value), names).length === 0) {
        problems.push(`${name}: ${setting} names no service of this file`);
      }
    }
    checkHardening(name, service, command, problems);
  }
  for (const command of Object.keys(REQUIRED_SETTINGS)) {
    if (!byCommand[command]) problems.push(`no service runs \`${command}\``);
  }
  const groups = new Set(
    ['ingestion', 'workers'].flatMap((command) =>
      (byCommand[command] ?? []).map((name) =>
        interpolate(environmentOf(services[name]).KAFKA_CONSUMER_GROUP ?? ''),
      ),
    ),
  );
  if (groups.size > 1)
    problems.push('ingestion and workers must share KAFKA_CONSUMER_GROUP (workers read its progress)');
  const keys = new Set(
    ['management', 'ingestion', 'workers'].flatMap((command) =>
      (byCommand[command] ?? []).map((name) => environmentOf(services[name]).ENCRYPTION_KEYS),
    ),
  );
  if (keys.size > 1) problems.push('management, ingestion and workers must share one ENCRYPTION_KEYS');

  const migrates = byCommand.migrate ?? [];
  for (const name of names) {
    for (const dependency of Object.keys(dependsOn(services[name]))) {
      if (!names.includes(dependency))
        problems.push(`${name}: depends on ${dependency}, which is not a service`);
    }
  }
  for (const command of Object.keys(SERVICE_PORTS)) {
    for (const name of byCommand[command] ?? []) {
      const dependencies = dependsOn(services[name]);
      if (!migrates.some((migrate) => dependencies[migrate] === 'service_completed_successfully')) {
        problems.push(
          `${name}: must depend on the migrate step with condition service_completed_successfully`,
        );
      }
    }
  }
  for (const name of migrates) {
    const dependencies = dependsOn(services[name]);
    const environment = environmentOf(services[name]);
    const needed = new Set(
      ['DATABASE_URL', 'KAFKA_BROKERS', 'CLICKHOUSE_URL'].flatMap((setting) =>
        serviceHosts(interpolate(environment[setting] ?? ''), names),
      ),
    );
    for (const dependency of needed) {
      if (dependencies[dependency] !== 'service_healthy') {
        problems.push(`${name}: must depend on ${dependency} with condition service_healthy`);
      }
      if (!services[dependency]?.healthcheck?.test) problems.push(`${dependency}: has no healthcheck`);
    }
    if (
      services[name].restart &&
      !['no', 'on-failure'].includes(String(services[name].restart).split(':')[0])
    ) {
      problems.push(`${name}: a one-off step must not restart ${services[name].restart}`);
    }
  }
  const visiting = new Set();
  const done = new Set();
  /**
   * @param {string} name
   * @param {string[]} trail
   */
  const visit = (name, trail) => {
    if (done.has(name) || !services[name]) return;
    if (visiting.has(name)) {
      problems.push(`depends_on has a cycle: ${[...trail, name].join(' -> ')}`);
      return;
    }
    visiting.add(name);
    for (const dependency of Object.keys(dependsOn(services[name]))) visit(dependency, [...trail, name]);
    visiting.delete(name);
    done.add(name);
  };
  for (const name of names) visit(name, []);

  // Published ports: distinct, capture apart from management, probe-only ports never public.
  /** @type {(ReturnType<typeof publishedPorts>[number] & { name: string })[]} */
  const published = [];
  for (const name of names) {
    for (const port of publishedPorts(services[name])) {
      if (!port.published) continue;
      const clash = published.find(
        (other) =>
          other.published === port.published &&
          (other.hostIp === port.hostIp ||
            !other.hostIp ||
            !port.hostIp ||
            other.hostIp === '0.0.0.0' ||
            port.hostIp === '0.0.0.0'),
      );
      if (clash) problems.push(`${name}: host port ${port.published} is published by ${clash.name} too`);
      published.push({ ...port, name });
    }
  }
  const publishedOf = (/** @type {string} */ command) =>
    (byCommand[command] ?? []).flatMap((name) =>
      publishedPorts(services[name]).filter((port) => port.published),
    );
  for (const command of Object.keys(SERVICE_PORTS)) {
    for (const name of byCommand[command] ?? []) {
      const ports = publishedPorts(services[name]);
      if (ports.some((port) => port.target !== SERVICE_PORTS[command])) {
        problems.push(`${name}: ${command} listens on ${SERVICE_PORTS[command]}; a port maps another`);
      }
    }
  }
  const capturePorts = publishedOf('capture');
  const managementPorts = publishedOf('management');
  if (capturePorts.length === 0) problems.push('capture is not published: SDKs cannot reach it');
  if (capturePorts.some((port) => managementPorts.some((other) => other.published === port.published))) {
    problems.push('capture must be published on its own port, apart from the management API');
  }
  for (const command of ['ingestion', 'workers']) {
    for (const port of publishedOf(command)) {
      if (!['127.0.0.1', '::1', '[::1]'].includes(port.hostIp)) {
        problems.push(
          `${command}: its probe port ${port.published} must be published on loopback only, or not at all`,
        );
      }
    }
  }

  for (const name of names) checkSecrets(name, environmentOf(services[name]), problems);
  for (const match of text.matchAll(/\$\{([A-Z0-9_]+):?-([^}]+)\}/g)) {
    if (SECRET_SETTINGS.includes(match[1]) || SECRET_NAME.test(match[1])) {
      problems.push(`\${${match[1]}} has a default: a secret never does`);
    }
  }

  if (validate) problems.push(...(await validateWithCompose(file, compose)));
  return problems;
}

const run = promisify(execFile);

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseYaml(text) {
  return YAML.parse(text, { merge: true });
}

/** Dummies for the variables `${NAME:?…}` requires, so validation can proceed. @param {string} text */
function dummySecrets(text) {
  return Object.fromEntries(
    [...text.matchAll(/\$\{([A-Za-z0-9_]+):?\?/g)].map((match) => [
      match[1],
      `dummy-${match[1].toLowerCase()}`,
    ]),
  );
}

/**
 * `docker compose` (v2) or Debian's docker-compose 1.29 (its schema predates top-level `name`, so a
 * copy without it is validated). Neither installed: says so, fails nothing.
 * @param {string} file
 * @param {ComposeFile} compose
 */
export async function validateWithCompose(file, compose) {
  const text = await readFile(file, 'utf8');
  const env = { ...process.env, ...dummySecrets(text) };
  /**
   * @param {string} command
   * @param {string[]} args
   * @param {{ cwd?: string }} [options]
   * @returns {Promise<{ ran: boolean, error?: string }>}
   */
  const tryRun = async (command, args, options) => {
    try {
      await run(command, args, { env, ...options });
      return { ran: true };
    } catch (caught) {
      const error = /** @type {NodeJS.ErrnoException & { stderr?: string }} */ (caught);
      if (error.code === 'ENOENT') return { ran: false };
      return { ran: true, error: (error.stderr || error.message).trim() };
    }
  };
  const v2 = await tryRun('docker', ['compose', '-f', file, 'config', '-q']);
  if (v2.ran && !/unknown (command|shorthand flag)|is not a docker command/.test(v2.error ?? '')) {
    return v2.error ? [`docker compose config: ${v2.error}`] : [];
  }
  const directory = await mkdtemp(path.join(tmpdir(), 'hogbase-compose-'));
  try {
    const { name: _name, ...withoutName } = compose;
    const copy = path.join(directory, 'compose.yaml');
    for (const service of Object.values(withoutName.services ?? {})) {
      if (service.build?.context)
        service.build.context = path.resolve(path.dirname(file), service.build.context);
    }
    await writeFile(copy, JSON.stringify(withoutName, null, 2));
    const v1 = await tryRun('docker-compose', ['-f', copy, 'config', '-q'], { cwd: directory });
    if (!v1.ran) {
      console.warn(
        'check-compose: neither `docker compose` nor docker-compose is installed: schema validation skipped',
      );
      return [];
    }
    return v1.error ? [`docker-compose config: ${v1.error}`] : [];
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = path.resolve(process.argv[2] ?? DEFAULT_COMPOSE_FILE);
  const problems = await checkCompose(file);
  if (problems.length > 0) {
    console.error(`${path.relative(process.cwd(), file)}: ${problems.length} problem(s)`);
    for (const problem of problems) console.error(`  - ${problem}`);
    process.exit(1);
  }
  console.log(`${path.relative(process.cwd(), file)}: ok`);
}

// Guest-side JavaScript (evaluated inside the app's QuickJS sandbox as its `setup` source): PostHog's
// plugin API as @posthog/plugin-scaffold types it, every effect going through a host function.

/**
 * Builds `meta` (config, attachments, global, storage, cache, jobs, metrics, utils, geoip), the
 * `posthog` global (`capture`, `api`), `RetryError` and a `require` of the modules apps may import,
 * then hands `meta` to every method call. Reads `globalThis.__hogbasePluginContext` (JSON: config,
 * attachments, metrics) set as a global by the host.
 */
export const PLUGIN_API_SETUP_SOURCE = `
(function (host, context) {
  const call = host.call;
  const fetchFunction = typeof globalThis.fetch === 'function' ? globalThis.fetch : undefined;

  class RetryError extends Error {
    constructor(message) {
      super(message);
      this.name = 'RetryError';
      this._isRetryError = true;
    }
  }

  const storage = {
    get: (key, defaultValue) =>
      call('storage.get', String(key)).then((value) => (value === null || value === undefined ? (defaultValue === undefined ? null : defaultValue) : value)),
    set: (key, value) => (value === undefined ? call('storage.del', String(key)) : call('storage.set', String(key), value)),
    del: (key) => call('storage.del', String(key)),
  };

  const serialize = (value, options) => (options && options.jsonSerialize === false ? String(value) : JSON.stringify(value));
  const deserialize = (value, options) => {
    if (value === null || value === undefined) return value;
    if (options && options.jsonSerialize === false) return value;
    try { return JSON.parse(value); } catch { return value; }
  };
  const cache = {
    set: (key, value, ttlSeconds, options) => call('cache.set', String(key), serialize(value, options), ttlSeconds === undefined ? null : ttlSeconds),
    get: (key, defaultValue, options) =>
      call('cache.get', String(key)).then((value) => (value === null ? defaultValue : deserialize(value, options))),
    incr: (key) => call('cache.incr', String(key)),
    expire: (key, ttlSeconds) => call('cache.expire', String(key), ttlSeconds),
    lpush: (key, elementOrArray) => call('cache.lpush', String(key), (Array.isArray(elementOrArray) ? elementOrArray : [elementOrArray]).map(String)),
    lrange: (key, start, end) => call('cache.lrange', String(key), start, end),
    llen: (key) => call('cache.llen', String(key)),
    lpop: (key, count) => call('cache.lpop', String(key), count === undefined ? 1 : count),
    lrem: (key, count, elementKey) => call('cache.lrem', String(key), count, String(elementKey)),
  };

  const toDate = (value) => (value instanceof Date ? value.getTime() : new Date(value).getTime());
  const UNIT_MS = { milliseconds: 1, millisecond: 1, seconds: 1e3, second: 1e3, minutes: 6e4, minute: 6e4, hours: 36e5, hour: 36e5, days: 864e5, day: 864e5 };
  const jobs = new Proxy({}, {
    get: (_target, name) => (payload) => {
      const enqueue = (runAt) => call('jobs.enqueue', String(name), payload === undefined ? {} : payload, runAt);
      return {
        runNow: () => enqueue(Date.now()),
        runIn: (duration, unit) => {
          const perUnit = UNIT_MS[String(unit)];
          if (perUnit === undefined) return Promise.reject(new Error('Unknown time unit: ' + unit));
          return enqueue(Date.now() + Number(duration) * perUnit);
        },
        runAt: (date) => enqueue(toDate(date)),
      };
    },
  });

  const metrics = {};
  for (const [name, kind] of Object.entries(context.metrics || {})) {
    const update = (operation) => (value) => { void call('metrics.update', name, operation, Number(value === undefined ? 1 : value)); };
    metrics[name] = kind === 'sum' ? { increment: update('increment') } : kind === 'max' ? { max: update('max') } : { min: update('min') };
  }

  const cursor = {
    init: (key, initialValue) => call('cursor.init', String(key), initialValue === undefined ? 0 : Number(initialValue)),
    increment: (key, incrementBy) => call('cursor.increment', String(key), incrementBy === undefined ? 1 : Number(incrementBy)),
  };

  const meta = {
    config: context.config,
    attachments: context.attachments,
    global: {},
    storage,
    cache,
    jobs,
    metrics,
    utils: { cursor },
    geoip: { locate: (ip) => call('geoip.locate', String(ip)) },
  };

  globalThis.posthog = {
    capture: (event, properties) => call('posthog.capture', String(event), properties === undefined ? {} : properties),
    api: {
      get: (path, options) => call('posthog.api', 'GET', String(path), options === undefined ? {} : options),
      post: (path, options) => call('posthog.api', 'POST', String(path), options === undefined ? {} : options),
      put: (path, options) => call('posthog.api', 'PUT', String(path), options === undefined ? {} : options),
      delete: (path, options) => call('posthog.api', 'DELETE', String(path), options === undefined ? {} : options),
    },
  };
  globalThis.RetryError = RetryError;

  const modules = {
    '@posthog/plugin-scaffold': { RetryError },
  };
  if (fetchFunction) {
    const nodeFetch = (...args) => fetchFunction(...args);
    nodeFetch.default = nodeFetch;
    modules['node-fetch'] = nodeFetch;
  }
  globalThis.require = (name) => {
    if (Object.prototype.hasOwnProperty.call(modules, name)) return modules[name];
    throw new Error("Cannot find module '" + name + "'");
  };

  delete globalThis.__hogbasePluginContext;
  globalThis.__hogbaseCallContext = () => [meta];
})(globalThis.__hogbaseHost, globalThis.__hogbasePluginContext);
`;

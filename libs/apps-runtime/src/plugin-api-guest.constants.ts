// Guest-side JavaScript, the sandbox's `setup` source: PostHog's plugin API as
// @posthog/plugin-scaffold types it, every effect through a host function.

/** NOTE: runs before the app with its own references to the builtins, which an app may replace. */
export const PLUGIN_API_SETUP_SOURCE = `
(function (host, context) {
  const call = host.call;
  const fetchFunction = typeof globalThis.fetch === 'function' ? globalThis.fetch : undefined;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const reject = Promise.reject.bind(Promise);
  const isArray = Array.isArray;
  const map = Array.prototype.map;
  const entries = Object.entries;
  const hasOwn = Object.prototype.hasOwnProperty;
  const StringOf = String;
  const NumberOf = Number;
  const DateType = Date;
  const dateNow = Date.now;
  const getTime = Date.prototype.getTime;
  const ProxyType = Proxy;
  const ErrorType = Error;
  const after = (promise, onFulfilled) => apply(then, promise, [onFulfilled]);

  class RetryError extends ErrorType {
    constructor(message) {
      super(message);
      this.name = 'RetryError';
      this._isRetryError = true;
    }
  }

  const storage = {
    get: (key, defaultValue) =>
      after(call('storage.get', StringOf(key)), (value) => (value === null || value === undefined ? (defaultValue === undefined ? null : defaultValue) : value)),
    set: (key, value) => (value === undefined ? call('storage.del', StringOf(key)) : call('storage.set', StringOf(key), value)),
    del: (key) => call('storage.del', StringOf(key)),
  };

  const serialize = (value, options) => (options && options.jsonSerialize === false ? StringOf(value) : stringify(value));
  const deserialize = (value, options) => {
    if (value === null || value === undefined) return value;
    if (options && options.jsonSerialize === false) return value;
    try { return parse(value); } catch { return value; }
  };
  const cache = {
    set: (key, value, ttlSeconds, options) => call('cache.set', StringOf(key), serialize(value, options), ttlSeconds === undefined ? null : ttlSeconds),
    get: (key, defaultValue, options) =>
      after(call('cache.get', StringOf(key)), (value) => (value === null ? defaultValue : deserialize(value, options))),
    incr: (key) => call('cache.incr', StringOf(key)),
    expire: (key, ttlSeconds) => call('cache.expire', StringOf(key), ttlSeconds),
    lpush: (key, elementOrArray) => call('cache.lpush', StringOf(key), apply(map, isArray(elementOrArray) ? elementOrArray : [elementOrArray], [(element) => StringOf(element)])),
    lrange: (key, start, end) => call('cache.lrange', StringOf(key), start, end),
    llen: (key) => call('cache.llen', StringOf(key)),
    lpop: (key, count) => call('cache.lpop', StringOf(key), count === undefined ? 1 : count),
    lrem: (key, count, elementKey) => call('cache.lrem', StringOf(key), count, StringOf(elementKey)),
  };

  const toDate = (value) => apply(getTime, value instanceof DateType ? value : new DateType(value), []);
  const UNIT_MS = { milliseconds: 1, millisecond: 1, seconds: 1e3, second: 1e3, minutes: 6e4, minute: 6e4, hours: 36e5, hour: 36e5, days: 864e5, day: 864e5 };
  const jobs = new ProxyType({}, {
    get: (_target, name) => (payload) => {
      const enqueue = (runAt) => call('jobs.enqueue', StringOf(name), payload === undefined ? {} : payload, runAt);
      return {
        runNow: () => enqueue(dateNow()),
        runIn: (duration, unit) => {
          const perUnit = apply(hasOwn, UNIT_MS, [StringOf(unit)]) ? UNIT_MS[StringOf(unit)] : undefined;
          if (perUnit === undefined) return reject(new ErrorType('Unknown time unit: ' + unit));
          return enqueue(dateNow() + NumberOf(duration) * perUnit);
        },
        runAt: (date) => enqueue(toDate(date)),
      };
    },
  });

  const metrics = {};
  for (const [name, kind] of entries(context.metrics || {})) {
    const update = (operation) => (value) => { void call('metrics.update', name, operation, NumberOf(value === undefined ? 1 : value)); };
    metrics[name] = kind === 'sum' ? { increment: update('increment') } : kind === 'max' ? { max: update('max') } : { min: update('min') };
  }

  const cursor = {
    init: (key, initialValue) => call('cursor.init', StringOf(key), initialValue === undefined ? 0 : NumberOf(initialValue)),
    increment: (key, incrementBy) => call('cursor.increment', StringOf(key), incrementBy === undefined ? 1 : NumberOf(incrementBy)),
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
    geoip: { locate: (ip) => call('geoip.locate', StringOf(ip)) },
  };

  globalThis.posthog = {
    capture: (event, properties) => call('posthog.capture', StringOf(event), properties === undefined ? {} : properties),
    api: {
      get: (path, options) => call('posthog.api', 'GET', StringOf(path), options === undefined ? {} : options),
      post: (path, options) => call('posthog.api', 'POST', StringOf(path), options === undefined ? {} : options),
      put: (path, options) => call('posthog.api', 'PUT', StringOf(path), options === undefined ? {} : options),
      delete: (path, options) => call('posthog.api', 'DELETE', StringOf(path), options === undefined ? {} : options),
    },
  };
  globalThis.RetryError = RetryError;

  const modules = {
    '@posthog/plugin-scaffold': { RetryError },
  };
  if (fetchFunction) {
    const nodeFetch = (...args) => apply(fetchFunction, undefined, args);
    nodeFetch.default = nodeFetch;
    modules['node-fetch'] = nodeFetch;
  }
  globalThis.require = (name) => {
    if (apply(hasOwn, modules, [name])) return modules[name];
    throw new ErrorType("Cannot find module '" + name + "'");
  };

  delete globalThis.__hogbasePluginContext;
  globalThis.__hogbaseCallContext = () => [meta];
})(globalThis.__hogbaseHost, globalThis.__hogbasePluginContext);
`;

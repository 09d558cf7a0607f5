// Guest-side JavaScript, evaluated inside QuickJS; strings because it never runs in the host.
//
// TRICKY: every piece runs before the app and keeps its own references to the builtins it uses: an
// app replacing `JSON.stringify` or `Promise.prototype.then` breaks its own code, never the trampoline.

/** Reading a thrown value's fields may run the app's getters: called only under the interrupt handler. */
export const DESCRIBE_SOURCE = `
(function () {
  const stringify = JSON.stringify;
  const StringOf = String;
  const text = (value) => {
    try {
      return typeof value === 'string' ? value : value === undefined ? undefined : StringOf(value);
    } catch {
      return undefined;
    }
  };
  return function describe(thrown) {
    try {
      if (thrown === null) return '{"kind":"null"}';
      if ((typeof thrown === 'object' || typeof thrown === 'function') && 'message' in thrown) {
        const field = (name) => {
          try {
            return text(thrown[name]);
          } catch {
            return undefined;
          }
        };
        return stringify({ kind: 'error', name: field('name'), message: field('message') ?? '', stack: field('stack') });
      }
      if (typeof thrown === 'string') return stringify({ kind: 'value', message: thrown });
      let json;
      try {
        json = stringify(thrown);
      } catch {
        json = undefined;
      }
      return stringify({ kind: 'value', message: typeof json === 'string' ? json : text(thrown) ?? '' });
    } catch {
      return '{"kind":"unreadable"}';
    }
  };
})()
`;

/** `console`, `fetch` (when the host gives one), CommonJS `module`/`exports`, and the JSON host `call`. */
export const PRELUDE_SOURCE = `
(function (host) {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const StringOf = String;
  const ErrorType = Error;
  const map = Array.prototype.map;
  const join = Array.prototype.join;
  const toLowerCase = String.prototype.toLowerCase;
  const hostLog = host.log;
  const format = (value) => {
    if (typeof value === 'string') return value;
    try {
      if (value instanceof ErrorType) {
        return value.stack ? value.name + ': ' + value.message + '\\n' + value.stack : StringOf(value);
      }
      const json = stringify(value);
      return json === undefined ? StringOf(value) : json;
    } catch {
      try {
        return StringOf(value);
      } catch {
        return '[unprintable]';
      }
    }
  };
  const guestConsole = {};
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    guestConsole[level] = (...args) => hostLog(level, apply(join, apply(map, args, [format]), [' ']));
  }
  globalThis.console = guestConsole;
  if (typeof host.fetch === 'function') {
    const hostFetch = host.fetch;
    globalThis.fetch = (url, init) =>
      apply(then, hostFetch(StringOf(url), stringify(init === undefined ? {} : init)), [
        (json) => {
          const answer = parse(json);
          return {
            status: answer.status,
            ok: answer.status >= 200 && answer.status < 300,
            headers: { get: (name) => answer.headers[apply(toLowerCase, StringOf(name), [])] ?? null },
            text: async () => answer.body,
            json: async () => parse(answer.body),
          };
        },
      ]);
  }
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  const hostCall = host.call;
  host.call = (name, ...args) =>
    apply(then, hostCall(StringOf(name), stringify(args)), [
      (json) => (json === 'undefined' ? undefined : parse(json)),
    ]);
})(globalThis.__hogbaseHost);
`;

/** After the setup source and the trampoline captured what they need: out of the app's reach. */
export const HIDE_HOST_SOURCE = `
delete globalThis.__hogbaseCallContext;
delete globalThis.__hogbaseHost;
`;

/**
 * The host's handles into the app: `invoke` reports through `host.settle(callId, ok, json)`;
 * `resolve()` finds the plugin object (`module.exports`, its `default`, else the globals, as
 * PostHog's VM did); `capabilities(plugin)`.
 */
export const TRAMPOLINE_SOURCE = `
(function (host, describe, methodNames) {
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const keysOf = Object.keys;
  const PromiseType = Promise;
  const promiseResolve = Promise.resolve;
  const then = Promise.prototype.then;
  const settle = host.settle;
  const callContext =
    typeof globalThis.__hogbaseCallContext === 'function' ? globalThis.__hogbaseCallContext : () => [];

  const fail = (callId, error) => settle(callId, 0, describe(error));
  const succeed = (callId, value) => {
    let json;
    try {
      json = value === undefined ? undefined : stringify(value);
    } catch (error) {
      fail(callId, error);
      return;
    }
    settle(callId, 1, json);
  };
  const append = (list, item) => defineProperty(list, list.length, { value: item, writable: true, enumerable: true, configurable: true });

  const invoke = (plugin, callId, isJob, name, argsJson) => {
    let result;
    try {
      const target = isJob ? plugin.jobs : plugin;
      const args = parse(argsJson);
      const extra = callContext();
      for (let index = 0; index < extra.length; index++) append(args, extra[index]);
      result = apply(target[name], target, args);
      if (result === null || (typeof result !== 'object' && typeof result !== 'function') || typeof result.then !== 'function') {
        succeed(callId, result);
        return;
      }
      const settled = apply(then, apply(promiseResolve, PromiseType, [result]), [
        (value) => succeed(callId, value),
        (error) => fail(callId, error),
      ]);
      // Reached only when describing or reporting failed itself (out of memory): still an answer.
      apply(then, settled, [undefined, () => settle(callId, 0, '{"kind":"unreadable"}')]);
    } catch (error) {
      fail(callId, error);
    }
  };

  const isPlugin = (candidate) => {
    if (candidate === null || (typeof candidate !== 'object' && typeof candidate !== 'function')) return false;
    for (let index = 0; index < methodNames.length; index++) {
      if (typeof candidate[methodNames[index]] === 'function') return true;
    }
    return typeof candidate.jobs === 'object' && candidate.jobs !== null;
  };
  const resolve = () => {
    const exported = globalThis.module === undefined ? undefined : globalThis.module.exports;
    if (exported !== null && typeof exported === 'object' && isPlugin(exported.default)) return exported.default;
    if (isPlugin(exported)) return exported;
    if (isPlugin(globalThis)) return globalThis;
    return {};
  };
  const capabilities = (plugin) => {
    const methods = [];
    for (let index = 0; index < methodNames.length; index++) {
      if (typeof plugin[methodNames[index]] === 'function') append(methods, methodNames[index]);
    }
    const jobs = [];
    const jobObject = plugin.jobs;
    if (typeof jobObject === 'object' && jobObject !== null) {
      const names = keysOf(jobObject);
      for (let index = 0; index < names.length; index++) {
        if (typeof jobObject[names[index]] === 'function') append(jobs, names[index]);
      }
    }
    return stringify({ methods, jobs });
  };
  return { invoke, resolve, capabilities };
})
`;

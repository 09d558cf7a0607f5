// Guest-side JavaScript, evaluated inside QuickJS. Kept as strings because it never runs in the host.

/**
 * Runs before the app: installs `console`, `fetch` (when the host gives one) and CommonJS
 * `module`/`exports`, then removes the host bridge object so the app only sees the wrappers.
 */
export const PRELUDE_SOURCE = `
(function (host) {
  const format = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack ? value.name + ': ' + value.message + '\\n' + value.stack : String(value);
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  };
  const guestConsole = {};
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    guestConsole[level] = (...args) => host.log(level, args.map(format).join(' '));
  }
  globalThis.console = guestConsole;
  if (typeof host.fetch === 'function') {
    const hostFetch = host.fetch;
    globalThis.fetch = (url, init) =>
      hostFetch(String(url), JSON.stringify(init === undefined ? {} : init)).then((json) => {
        const answer = JSON.parse(json);
        return {
          status: answer.status,
          ok: answer.status >= 200 && answer.status < 300,
          headers: { get: (name) => answer.headers[String(name).toLowerCase()] ?? null },
          text: async () => answer.body,
          json: async () => JSON.parse(answer.body),
        };
      });
  }
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  const hostCall = host.call;
  host.call = (name, ...args) =>
    hostCall(String(name), JSON.stringify(args)).then((json) => (json === 'undefined' ? undefined : JSON.parse(json)));
})(globalThis.__hogbaseHost);
`;

/**
 * Run after the setup source and the invoke trampoline (which captured the call context): takes the
 * host bridge and the call context out of the app's reach.
 */
export const HIDE_HOST_SOURCE = `
delete globalThis.__hogbaseCallContext;
delete globalThis.__hogbaseHost;
`;

/**
 * Evaluates to a function that finds the app's plugin object: `module.exports` (or its `default`,
 * as transpiled ES modules leave it), else the globals when nothing was exported, as PostHog's VM did.
 */
export const RESOLVE_PLUGIN_SOURCE = `
(function (methodNames) {
  const isPlugin = (candidate) =>
    candidate !== null &&
    (typeof candidate === 'object' || typeof candidate === 'function') &&
    (methodNames.some((name) => typeof candidate[name] === 'function') ||
      (typeof candidate.jobs === 'object' && candidate.jobs !== null));
  const exported = module.exports;
  if (exported !== null && typeof exported === 'object' && isPlugin(exported.default)) return exported.default;
  if (isPlugin(exported)) return exported;
  if (isPlugin(globalThis)) return globalThis;
  return {};
})
`;

/** Evaluates to a function listing the plugin's exported methods and job names as a JSON string. */
export const CAPABILITIES_SOURCE = `
(function (plugin, methodNames) {
  const jobs = typeof plugin.jobs === 'object' && plugin.jobs !== null ? plugin.jobs : {};
  return JSON.stringify({
    methods: methodNames.filter((name) => typeof plugin[name] === 'function'),
    jobs: Object.keys(jobs).filter((name) => typeof jobs[name] === 'function'),
  });
})
`;

/**
 * Evaluates to a factory of the call trampoline: arguments cross in as one JSON string and the
 * result leaves as one (or as a promise of one), so no guest object is ever handed to the host.
 * The setup's call context (the plugin API's `meta`) is appended to the arguments.
 */
export const INVOKE_SOURCE = `
(function () {
  const callContext =
    typeof globalThis.__hogbaseCallContext === 'function' ? globalThis.__hogbaseCallContext : () => [];
  return function (plugin, method, argsJson) {
  const target = method.startsWith('jobs.') ? plugin.jobs : plugin;
  const name = method.startsWith('jobs.') ? method.slice(5) : method;
  const args = JSON.parse(argsJson).concat(callContext());
  const result = target[name](...args);
  const toJson = (value) => (value === undefined ? undefined : JSON.stringify(value));
  if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
    return Promise.resolve(result).then(toJson);
  }
  return toJson(result);
  };
})
`;

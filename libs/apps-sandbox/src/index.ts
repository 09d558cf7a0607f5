export {
  createSandbox,
  PLUGIN_METHOD_NAMES,
  Sandbox,
  type PluginMethodName,
  type SandboxCapabilities,
  type SandboxFetch,
  type SandboxFetchInit,
  type SandboxFetchResponse,
  type SandboxHostFunction,
  type SandboxJson,
  type SandboxLoadOptions,
  type SandboxLogLevel,
  type SandboxLogLine,
  type SandboxOptions,
} from './sandbox';
export { PooledSandbox, SandboxPool, type SandboxPoolNotice, type SandboxPoolOptions } from './sandbox-pool';
export {
  SandboxAppError,
  SandboxBudgetError,
  SandboxError,
  SandboxMemoryError,
  SandboxTimeoutError,
} from './sandbox-errors';

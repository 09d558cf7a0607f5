// The pool apps run in, and what crosses its boundary.
export { PooledSandbox, SandboxPool, type SandboxPoolNotice } from './sandbox-pool.service';
export {
  PLUGIN_METHOD_NAMES,
  type PluginMethodName,
  type SandboxCapabilities,
  type SandboxFetch,
  type SandboxFetchInit,
  type SandboxFetchResponse,
  type SandboxHostFunction,
  type SandboxJson,
} from './sandbox.service';

// What a call rejects with: the app's own throw, or a limit (the sandbox is then broken).
export {
  SandboxAppError,
  SandboxBudgetError,
  SandboxError,
  SandboxMemoryError,
  SandboxTimeoutError,
} from './sandbox.errors';

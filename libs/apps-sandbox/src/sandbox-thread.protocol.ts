import type {
  PluginMethodName,
  SandboxCapabilities,
  SandboxJson,
  SandboxLoadOptions,
  SandboxLogLine,
} from './sandbox';

/** A sandbox as the pool asks its thread to create it: the options that are data, not functions. */
export interface SandboxThreadSpec {
  memoryLimitBytes: number;
  timeLimitMs: number;
  cpuLimitMs: number;
  maxPayloadLength: number | undefined;
  hasFetch: boolean;
  hostFunctionNames: string[];
}

/** How a call or load failed, across the thread boundary (an Error's class does not cross it). */
export interface SandboxFailure {
  kind: 'app' | 'timeout' | 'memory' | 'sandbox';
  message: string;
  appErrorName?: string;
  appStack?: string;
}

/** The main thread's messages to a sandbox thread. */
export type ToSandboxThread =
  | { type: 'create'; requestId: number; sandboxId: number; spec: SandboxThreadSpec }
  | { type: 'load'; requestId: number; sandboxId: number; code: string; options: SandboxLoadOptions }
  | {
      type: 'call';
      requestId: number;
      sandboxId: number;
      method: PluginMethodName | `jobs.${string}`;
      args: SandboxJson[];
    }
  | { type: 'dispose'; sandboxId: number }
  | { type: 'host-answer'; hostCallId: number; value?: SandboxJson; error?: string };

/** A sandbox thread's messages to the main thread. */
export type FromSandboxThread =
  | {
      type: 'answer';
      requestId: number;
      /** Whether the sandbox is broken after this request (time or memory error, or thread trouble). */
      broken: boolean;
      value?: SandboxJson;
      capabilities?: SandboxCapabilities;
      failure?: SandboxFailure;
    }
  /** Host work the guest asked for: its `fetch` (`[url, init]`) or a host function by name. */
  | {
      type: 'host-call';
      hostCallId: number;
      sandboxId: number;
      kind: 'fetch' | 'function';
      name: string;
      args: SandboxJson[];
    }
  | { type: 'log'; sandboxId: number; lines: SandboxLogLine[] }
  /**
   * The sandbox's app went on running after its CPU budget cut it off (see `onRunaway` in
   * sandbox.ts): its calls time out with `message` and the thread is ended, the only way to stop it.
   */
  | { type: 'runaway'; sandboxId: number; message: string };

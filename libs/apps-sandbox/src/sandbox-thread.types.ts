import type {
  PluginMethodName,
  SandboxCapabilities,
  SandboxJson,
  SandboxLoadOptions,
  SandboxLogLine,
} from './sandbox.service';

/** The options that are data, not functions. */
export interface SandboxThreadSpec {
  memoryLimitBytes: number;
  timeLimitMs: number;
  cpuLimitMs: number;
  maxPayloadLength: number | undefined;
  hasFetch: boolean;
  hostFunctionNames: string[];
}

/** An Error's class does not cross the thread boundary. */
export interface SandboxFailure {
  kind: 'app' | 'timeout' | 'memory' | 'sandbox';
  message: string;
  appErrorName?: string;
  appStack?: string;
}

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

export type FromSandboxThread =
  | {
      type: 'answer';
      requestId: number;
      broken: boolean;
      value?: SandboxJson;
      capabilities?: SandboxCapabilities;
      failure?: SandboxFailure;
    }
  /** Its `fetch` (`[url, init]`) or a host function by name. */
  | {
      type: 'host-call';
      hostCallId: number;
      sandboxId: number;
      kind: 'fetch' | 'function';
      name: string;
      args: SandboxJson[];
    }
  | { type: 'log'; sandboxId: number; lines: SandboxLogLine[] }
  /** See `onRunaway` in sandbox.service.ts: the thread is ended, the only way to stop the app. */
  | { type: 'runaway'; sandboxId: number; message: string };

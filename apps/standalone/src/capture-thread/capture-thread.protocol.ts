import type { CaptureConfig, LogLevel } from '@hogbase/config';
import type { QueueMessage } from '@hogbase/event-contract';
import type { QueueReadiness } from '@hogbase/queue';
import type { Readiness } from '@hogbase/service-runtime';

export interface CaptureThreadData {
  config: CaptureConfig;
  logLevel: LogLevel;
  databaseUrl: string;
  /** At start; then `queue-ready` on each change. */
  queue: QueueReadiness;
}

export type FromCaptureThread =
  | { type: 'listening'; url: string }
  | { type: 'publish'; id: number; topic: string; messages: QueueMessage[] }
  | { type: 'answer'; id: number; readiness?: Readiness; metrics?: string; error?: string }
  | { type: 'stopped' };

/** An Error's class does not cross the thread boundary. */
export interface PublishFailure {
  name: string;
  message: string;
  maxBytes?: number;
}

export type ToCaptureThread =
  | { type: 'published'; id: number; failure?: PublishFailure }
  | { type: 'queue-ready'; readiness: QueueReadiness }
  | { type: 'ask'; id: number; question: 'ready' | 'metrics' }
  | { type: 'stop' };

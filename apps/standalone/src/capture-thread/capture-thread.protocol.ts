import type { CaptureConfig, LogLevel } from '@hogbase/config';
import type { QueueMessage } from '@hogbase/event-contract';
import type { QueueReadiness } from '@hogbase/queue';
import type { Readiness } from '@hogbase/service-runtime';

/** What the capture thread is started with. */
export interface CaptureThreadData {
  config: CaptureConfig;
  logLevel: LogLevel;
  /** The Postgres capture's pool connects to (the embedded one's socket, or DATABASE_URL). */
  databaseUrl: string;
  /** The queue's readiness when the thread starts (then `queue-ready` on each change). */
  queue: QueueReadiness;
}

/** The thread's messages to the main thread. */
export type FromCaptureThread =
  | { type: 'listening'; url: string }
  | { type: 'publish'; id: number; topic: string; messages: QueueMessage[] }
  | { type: 'answer'; id: number; readiness?: Readiness; metrics?: string; error?: string }
  | { type: 'stopped' };

/** How a publish failed, across the thread boundary (an Error's class does not cross it). */
export interface PublishFailure {
  name: string;
  message: string;
  maxBytes?: number;
}

/** The main thread's messages to the capture thread. */
export type ToCaptureThread =
  | { type: 'published'; id: number; failure?: PublishFailure }
  | { type: 'queue-ready'; readiness: QueueReadiness }
  | { type: 'ask'; id: number; question: 'ready' | 'metrics' }
  | { type: 'stop' };

export { CaptureError } from './capture.errors';
export { decodePayload, type QueryParams } from './payload-decoder.util';
export { parseBatch, validateToken } from './batch-parser.util';
export { normalizeBatch } from './event-normalizer.util';
export { toQueueMessages } from './queue-messages.util';

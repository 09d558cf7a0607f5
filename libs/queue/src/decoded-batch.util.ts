import type {
  BatchHandler,
  ConsumedBatch,
  ConsumedMessage,
  DecodedBatch,
  DecodingBatchHandler,
} from './queue.types';

export function decodedInCall<Decoded>(
  batch: ConsumedBatch,
  decode: (message: ConsumedMessage) => Decoded,
): DecodedBatch<Decoded> {
  return {
    ...batch,
    decoded: () => batch.messages.map((message) => decode(message)),
    waiting: () => undefined,
  };
}

/** For a consumer whose calls run side by side. */
export function decodingInCall<Decoded>(handler: DecodingBatchHandler<Decoded>): BatchHandler {
  return (batch) => handler.handle(decodedInCall(batch, (message) => handler.decode(message)));
}

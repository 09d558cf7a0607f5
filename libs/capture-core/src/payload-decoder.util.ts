import { constants } from 'node:buffer';
import { gunzipSync } from 'node:zlib';

import { PayloadInvalidError, PayloadTooLargeError } from './capture.errors';
import { decompressLzStringBase64, LzStringOutputTooLongError } from './lz-string.util';

/** Bodies decoded as `rust/capture/src/v0_request.rs` does, more lenient where strict would lose events. */

/** Query parameters as an HTTP framework hands them over (repeated keys: the first counts). */
export type QueryParams = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RawCaptureRequest {
  body: Buffer;
  /** Parameters included (`; charset=...` is ignored). */
  contentType?: string;
  contentEncoding?: string;
  query: QueryParams;
}

export interface DecodePayloadOptions {
  /** In bytes (UTF-16 code units for lz-string); inflating stops once past it. */
  maxDecodedBytes?: number;
}

export const DEFAULT_MAX_DECODED_BYTES = 100 * 1024 * 1024;

const MAX_LENGTH = constants.MAX_LENGTH;

type Compression = 'gzip' | 'lz-string' | 'base64';

/** Form prefixes that also happen to be valid base64 text and must not be base64-decoded. */
const FORM_PREFIXES = ['data=', 'ver=', '_=', 'ip=', 'compression='];
/** As rust/capture: only this many leading characters are checked to call a body base64. */
const BASE64_SNIFF_LENGTH = 128;

export function decodePayload(request: RawCaptureRequest, options: DecodePayloadOptions = {}): unknown {
  return parseJson(decodePayloadText(request, options));
}

export function decodePayloadText(request: RawCaptureRequest, options: DecodePayloadOptions = {}): string {
  const limit = options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LENGTH) {
    throw new RangeError(`maxDecodedBytes must be an integer from 1 to ${MAX_LENGTH}, got ${limit}`);
  }
  const queryCompression = parseCompression(firstValue(request.query.compression));
  const headerCompression = parseCompression(request.contentEncoding);

  const queryData = firstValue(request.query.data);
  if (queryData) return decodeDataField(queryData, queryCompression ?? headerCompression, limit);

  const body = request.body;
  if (body.length === 0) throw new PayloadInvalidError('request missing data payload', 'no_data');

  if (isFormContentType(request.contentType) && !hasGzipMagic(body) && !startsAsJson(body)) {
    // NOTE: a JSON or gzip body with the form content type (a common client default) is read as
    // what it is; rust/capture's 400 would only make the SDK drop events.
    const form = new URLSearchParams(body.toString('utf8'));
    const data = form.get('data');
    if (!data) throw new PayloadInvalidError('expected form data in request payload');
    const compression = queryCompression ?? parseCompression(form.get('compression')) ?? headerCompression;
    return decodeDataField(data, compression, limit);
  }
  return decodeBytes(body, queryCompression ?? headerCompression, limit);
}

function decodeDataField(data: string, compression: Compression | undefined, limit: number): string {
  const first = firstNonSpaceCode(data);
  if (first === 0x7b || first === 0x5b) {
    // `{` and `[` are outside both base64 alphabets: this is JSON already.
    if (data.length > limit) throw new PayloadTooLargeError(limit);
    return data;
  }
  // Form and query decoding turned a base64 `+` into a space; put it back.
  const text = data.includes(' ') ? data.replaceAll(' ', '+') : data;
  if (compression === 'lz-string') return decompressLz(text, limit);
  return decodeBytes(Buffer.from(text, 'base64'), compression, limit);
}

function decodeBytes(input: Buffer, compression: Compression | undefined, limit: number): string {
  if (compression === 'lz-string' && !startsAsJson(input))
    return decompressLz(input.toString('latin1'), limit);
  let bytes = input;
  if (compression === 'base64' || looksLikeStrictBase64(bytes)) bytes = decodeBase64(bytes) ?? bytes;
  // NOTE: by magic bytes whatever the hint: posthog-js sends gzip without one, and a proxy may
  // have inflated a body that still carries one.
  if (hasGzipMagic(bytes)) bytes = gunzipBounded(bytes, limit);
  if (bytes.length > limit) throw new PayloadTooLargeError(limit);
  let text = utf8(bytes);
  // Legacy clients base64-encoded the JSON before compressing it: decode once more.
  const first = firstNonSpaceCode(text);
  if (first !== 0x7b && first !== 0x5b && looksLikeStrictBase64(text)) {
    const decoded = decodeBase64(Buffer.from(text, 'latin1'));
    if (decoded) text = utf8(decoded);
  }
  return text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8's message quotes a bit of the input; keep the detail short.
    const reason = errorMessage(error, 'invalid JSON').slice(0, 200);
    throw new PayloadInvalidError(`failed to parse request: ${reason}`);
  }
}

function gunzipBounded(bytes: Buffer, limit: number): Buffer {
  try {
    // A gzip bomb costs at most `limit` bytes of memory: zlib stops once the output passes it.
    return gunzipSync(bytes, { maxOutputLength: limit });
  } catch (error) {
    if (errorProperty(error, 'code') === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLargeError(limit);
    throw new PayloadInvalidError(`failed to decode request: gzip: ${errorMessage(error, 'invalid data')}`);
  }
}

function decompressLz(text: string, limit: number): string {
  let result: string | null;
  try {
    result = decompressLzStringBase64(text.trim(), limit);
  } catch (error) {
    if (error instanceof LzStringOutputTooLongError) throw new PayloadTooLargeError(limit);
    throw error;
  }
  if (result === null || result.length === 0) {
    throw new PayloadInvalidError('failed to decode request: invalid lz-string data');
  }
  return result;
}

/** rust/capture's "strict" test, on a prefix only; form data (`data=…`) is valid base64 too, excluded. */
function looksLikeStrictBase64(payload: Buffer | string): boolean {
  const length = payload.length;
  if (length === 0 || length % 4 !== 0) return false;
  const end = Math.min(length, BASE64_SNIFF_LENGTH);
  const isText = typeof payload === 'string';
  for (let index = 0; index < end; index++) {
    if (!isBase64Byte(isText ? payload.charCodeAt(index) : (payload[index] ?? 0))) return false;
  }
  const head = isText ? payload.slice(0, 16) : payload.toString('latin1', 0, 16);
  return !FORM_PREFIXES.some((prefix) => head.startsWith(prefix));
}

/** Strict decode: null (keep the original) when any character is outside the alphabet. */
function decodeBase64(bytes: Buffer): Buffer | null {
  const text = bytes.toString('latin1').trim();
  let padding = 0;
  if (text.endsWith('==')) padding = 2;
  else if (text.endsWith('=')) padding = 1;
  const decoded = Buffer.from(text, 'base64');
  // Node skips characters outside the alphabet silently; a short result gives them away.
  const expected = Math.floor((text.length * 3) / 4) - padding;
  return text.length % 4 === 0 && decoded.length === expected ? decoded : null;
}

function isBase64Byte(byte: number): boolean {
  return (
    (byte >= 0x41 && byte <= 0x5a) || // A-Z
    (byte >= 0x61 && byte <= 0x7a) || // a-z
    (byte >= 0x30 && byte <= 0x39) || // 0-9
    byte === 0x2b || // +
    byte === 0x2f || // /
    byte === 0x3d // =
  );
}

function hasGzipMagic(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0x1f && bytes[1] === 0x8b && bytes[2] === 0x08;
}

function startsAsJson(bytes: Buffer): boolean {
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    if (byte === 0xef && bytes[index + 1] === 0xbb && bytes[index + 2] === 0xbf) {
      index += 2; // UTF-8 byte order mark
      continue;
    }
    return byte === 0x7b || byte === 0x5b;
  }
  return false;
}

function firstNonSpaceCode(text: string): number {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0xfeff) return code;
  }
  return -1;
}

/** UTF-8 to text: invalid sequences become U+FFFD (never an error), a leading BOM is dropped. */
function utf8(bytes: Buffer): string {
  const hasBom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bytes.toString('utf8', hasBom ? 3 : 0);
}

function parseCompression(value: string | null | undefined): Compression | undefined {
  if (!value) return undefined;
  switch (value.trim().toLowerCase()) {
    case 'gzip':
    case 'gzip-js':
      return 'gzip';
    case 'lz64':
    case 'lz-string':
      return 'lz-string';
    case 'base64':
    case 'b64':
      return 'base64';
    default:
      return undefined;
  }
}

function isFormContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/x-www-form-urlencoded';
}

function firstValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

// NOTE: errors are read by shape, not `instanceof Error`: zlib's come from Node's own realm, which
// is not the caller's under Jest's VM sandbox.
function errorProperty(error: unknown, key: 'code' | 'message'): unknown {
  return typeof error === 'object' && error !== null && key in error
    ? (error as Record<string, unknown>)[key]
    : undefined;
}

function errorMessage(error: unknown, fallback: string): string {
  const message = errorProperty(error, 'message');
  return typeof message === 'string' ? message : fallback;
}

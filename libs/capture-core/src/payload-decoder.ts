import { constants } from 'node:buffer';
import { gunzipSync } from 'node:zlib';

import { PayloadInvalidError, PayloadTooLargeError } from './capture-errors';
import { decompressLzStringBase64, LzStringOutputTooLongError } from './lz-string.util';

/**
 * Turns a capture request body into its JSON value, whatever the SDK did to it: gzip (by header,
 * by `?compression=`, by form field, or by magic bytes alone), lz-string base64, plain base64,
 * `application/x-www-form-urlencoded` with `data=`, or the legacy `?data=` query parameter.
 * Follows rust/capture's v0 decoding (reference §1.2), a little more lenient where being strict
 * would only lose events (see README).
 */

/** Query parameters as an HTTP framework hands them over (repeated keys: the first counts). */
export type QueryParams = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RawCaptureRequest {
  body: Buffer;
  /** The `Content-Type` header, parameters included (`; charset=...` is ignored). */
  contentType?: string;
  /** The `Content-Encoding` header. */
  contentEncoding?: string;
  query: QueryParams;
}

export interface DecodePayloadOptions {
  /**
   * Upper bound of the decoded payload in bytes (UTF-16 code units for lz-string). Inflating stops
   * as soon as it is passed. Defaults to 100 MiB, rust/capture's `BATCH_BODY_SIZE * 5`.
   */
  maxDecodedBytes?: number;
}

export const DEFAULT_MAX_DECODED_BYTES = 100 * 1024 * 1024;

const MAX_LENGTH = constants.MAX_LENGTH;

type Compression = 'gzip' | 'lz-string' | 'base64';

/** Form prefixes that also happen to be valid base64 text and must not be base64-decoded. */
const FORM_PREFIXES = ['data=', 'ver=', '_=', 'ip=', 'compression='];
/** As rust/capture: only this many leading characters are checked to call a body base64. */
const BASE64_SNIFF_LENGTH = 128;

/** Decodes and JSON-parses a capture request body. Throws PayloadInvalidError or PayloadTooLargeError. */
export function decodePayload(request: RawCaptureRequest, options: DecodePayloadOptions = {}): unknown {
  return parseJson(decodePayloadText(request, options));
}

/** The decoded payload as text, before JSON parsing. */
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
    // NOTE: a JSON or gzip body sent with the form content type (a common client default) is read
    // as what it is; rust/capture answers 400 there, which would only make the SDK drop events.
    const form = new URLSearchParams(body.toString('utf8'));
    const data = form.get('data');
    if (!data) throw new PayloadInvalidError('expected form data in request payload');
    const compression = queryCompression ?? parseCompression(form.get('compression')) ?? headerCompression;
    return decodeDataField(data, compression, limit);
  }
  return decodeBytes(body, queryCompression ?? headerCompression, limit);
}

/** The `data` of a form or of the query: text that is lz-string, base64 (of JSON or gzip), or JSON. */
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
  // NOTE: gzip is recognised by its magic bytes whatever the hint says: posthog-js sends gzip
  // without one, and a gzip hint on a body that is not gzip (a proxy already inflated it) is read
  // as it is instead of failing.
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
    // maxOutputLength makes zlib stop inflating (and throw) as soon as the output passes the
    // limit: a gzip bomb costs at most `limit` bytes of memory, never its full size.
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

/**
 * rust/capture's "strict" test: the first 128 characters are in the standard base64 alphabet,
 * the length is a multiple of 4, and the text does not start like form data (`data=…` is valid
 * base64 text too). Looking at a prefix only keeps this O(1) on a 20 MB body.
 */
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

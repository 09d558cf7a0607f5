import {
  createParamDecorator,
  HttpException,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { AnyFilesInterceptor } from '@nestjs/platform-express';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { ApiError, validationError } from '../common/api.error';
import { exceedsDepth, MAX_BODY_DEPTH } from '../common/request-hardening.middleware';
import { noAttachmentChanges, type AttachmentChanges } from './plugin-config-values.util';

/** Largest file an attachment field takes: apps read it whole, in the sandbox's memory. */
export const MAX_ATTACHMENT_BYTES = 1024 * 1024;
/** More files than a config has attachment fields, few enough to bound a request's memory. */
const MAX_ATTACHMENT_FILES = 10;

const ADD_ATTACHMENT = /^add_attachment\[([^\]]+)\]$/;

interface UploadedFile {
  fieldname: string;
  originalname: string;
  mimetype: string;
  size: number;
  buffer: Buffer;
}

interface MulterCause {
  code?: unknown;
  field?: unknown;
}

const changesByRequest = new WeakMap<Request, AttachmentChanges>();

export const AttachmentChangesOf = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AttachmentChanges =>
    changesByRequest.get(context.switchToHttp().getRequest<Request>()) ?? noAttachmentChanges(),
);

/**
 * PostHog's multipart form of a config write, reshaped into the JSON body for the same DTO.
 * Runs after the access guard, so nobody uploads before being allowed to write.
 * SECURITY: files stay in memory, so every count and size is bounded.
 */
@Injectable()
export class PluginConfigFormInterceptor implements NestInterceptor {
  private readonly multer = new (AnyFilesInterceptor({
    limits: {
      fileSize: MAX_ATTACHMENT_BYTES,
      files: MAX_ATTACHMENT_FILES,
      fields: 30,
      parts: 40,
      fieldNameSize: 200,
      // The config JSON, bounded as a JSON body is.
      fieldSize: 2 * 1024 * 1024,
      fieldNestingDepth: 1,
      // TRICKY: multer reads `remove_attachment[5]` as index 5 of an array, then closes the gap
      // (it would become key "0"): refused instead; only a key "0" reads as itself.
      fieldArrayIndexLimit: 0,
    },
    // Browsers and fetch send UTF-8 file names; busboy would read them as latin1.
    defParamCharset: 'utf8',
    fileFilter: (_request, file, accept) => {
      if (ADD_ATTACHMENT.test(file.fieldname)) accept(null, true);
      else accept(validationError(`Unexpected file "${file.fieldname}": send add_attachment[<key>].`), false);
    },
  }))();

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<Request>();
    if (!request.is('multipart/form-data')) return next.handle();
    // The handler and its pipes run on subscription, so the body can be reshaped after multer.
    let handled: Observable<unknown>;
    try {
      handled = await this.multer.intercept(context, next);
    } catch (error) {
      throw refusal(error);
    }
    const fields = (request.body ?? {}) as Record<string, unknown>;
    const { files } = request as Request & { files?: unknown };
    changesByRequest.set(request, attachmentChanges(fields, files));
    request.body = formBody(fields);
    return handled;
  }
}

function refusal(error: unknown): unknown {
  if (!(error instanceof HttpException)) return error;
  const cause = (error.cause ?? {}) as MulterCause;
  const field = typeof cause.field === 'string' ? cause.field : null;
  switch (cause.code) {
    case 'LIMIT_FILE_SIZE':
      return new ApiError(
        'payload_too_large',
        `The file ${field ?? 'sent'} is larger than ${MAX_ATTACHMENT_BYTES} bytes (1 MiB), the most an attachment takes.`,
        field,
      );
    case 'LIMIT_FILE_COUNT':
      return validationError(`At most ${MAX_ATTACHMENT_FILES} files in one request.`);
    default:
      return error;
  }
}

function attachmentChanges(fields: Record<string, unknown>, files: unknown): AttachmentChanges {
  const changes = noAttachmentChanges();
  for (const file of (Array.isArray(files) ? files : []) as UploadedFile[]) {
    const key = ADD_ATTACHMENT.exec(file.fieldname)?.[1];
    if (key === undefined) continue;
    if (changes.add.has(key)) throw validationError(`One file only for "${key}".`, file.fieldname);
    changes.add.set(key, {
      contentType: file.mimetype || 'application/octet-stream',
      fileName: file.originalname,
      contents: file.buffer,
    });
  }
  const removed = fields.remove_attachment;
  // An array when the key is "0": multer reads a numeric bracket as an index.
  if (removed !== null && typeof removed === 'object') {
    for (const key of Object.keys(removed)) changes.remove.add(key);
  }
  return changes;
}

function formBody(fields: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'remove_attachment') continue;
    if ((name === 'order' || name === 'plugin') && typeof value === 'string' && /^-?\d{1,15}$/.test(value)) {
      body[name] = Number(value);
    } else if (name === 'config' && typeof value === 'string') {
      body[name] = parseConfig(value);
    } else {
      body[name] = value;
    }
  }
  return body;
}

function parseConfig(text: string): unknown {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    throw new ApiError('parse_error', 'JSON parse error - the config field is not valid JSON.', 'config');
  }
  if (config !== null && typeof config === 'object' && exceedsDepth(config, MAX_BODY_DEPTH)) {
    throw new ApiError('invalid_input', `JSON nesting is deeper than ${MAX_BODY_DEPTH} levels.`, 'config');
  }
  return config;
}

import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { redactUrl } from '@hogbase/config';
import { RouteMatcher } from '../routes/route-matcher.service';
import { ApiError, ErrorBody, RETRY_AFTER_SECONDS, serviceUnavailable } from './api.error';
import { PostgresAvailability } from './postgres-availability.service';
import { isPostgresUnavailable } from './postgres-unavailable.util';
import { UnsupportedMediaTypeError } from './validation.pipe';

interface BodyParserError {
  type?: string;
  status?: number;
}

/** Postgres' class 22, "data exception". */
function isDataException(exception: unknown): boolean {
  const code = (exception as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  return exception instanceof QueryFailedError && typeof code === 'string' && code.startsWith('22');
}

/** Maps whatever was thrown to PostHog's `{type, code, detail, attr}` body. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpError');

  constructor(
    private readonly routes: RouteMatcher,
    private readonly postgres: PostgresAvailability,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    let error: ApiError;
    if (isPostgresUnavailable(exception)) {
      // Logged once per outage (PostgresAvailability), not once per request refused meanwhile.
      this.postgres.failed(exception);
      error = serviceUnavailable();
    } else {
      error = this.toApiError(exception, request);
      this.log(exception, error, request);
    }
    if (response.headersSent) return;
    if (error.status === HttpStatus.SERVICE_UNAVAILABLE) {
      response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    }
    if (error.code === 'method_not_allowed') {
      response.setHeader('Allow', this.routes.methodsFor(request.path).join(', '));
    }
    if (error.code === 'not_authenticated' || error.code === 'authentication_failed') {
      response.setHeader('WWW-Authenticate', 'Bearer');
    }
    response.status(error.status).json(error.body satisfies ErrorBody);
  }

  private log(exception: unknown, error: ApiError, request: Request): void {
    if (error.status < HttpStatus.INTERNAL_SERVER_ERROR) return;
    const context = { method: request.method, url: redactUrl(request.originalUrl), requestId: request.id };
    if (exception instanceof ApiError) {
      this.logger.warn({ ...context, code: error.code }, error.detail);
      return;
    }
    this.logger.error({ ...context, err: withoutQueryValues(exception) }, 'unhandled error');
  }

  private toApiError(exception: unknown, request: Request): ApiError {
    if (exception instanceof ApiError) return exception;
    // Nest wraps body-parser failures in a BadRequestException whose cause is the parser's error.
    const parserError = (exception instanceof HttpException ? exception.cause : exception) as
      BodyParserError | undefined;
    if (parserError?.type === 'entity.parse.failed') {
      return new ApiError('parse_error', 'JSON parse error - the request body is not valid JSON.');
    }
    if (parserError?.type === 'entity.too.large') {
      return new ApiError('payload_too_large', 'Request body is too large.');
    }
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
      return new ApiError('unsupported_media_type', 'Unsupported request encoding.');
    }
    if (exception instanceof UnsupportedMediaTypeError) {
      return new ApiError(
        'unsupported_media_type',
        `Unsupported media type "${exception.mediaType}" in request.`,
      );
    }
    if (isDataException(exception)) {
      // The client's fault, whichever route let the value through unchecked.
      return new ApiError('invalid_input', 'A value in the request is out of range or not representable.');
    }
    if (exception instanceof HttpException) {
      switch (exception.getStatus() as HttpStatus) {
        case HttpStatus.NOT_FOUND:
          // Nest throws this for requests no route serves: a known path with another method is a 405.
          return this.routes.methodsFor(request.path).length > 0
            ? new ApiError('method_not_allowed', `Method "${request.method}" not allowed.`)
            : new ApiError('not_found', 'Endpoint not found.');
        case HttpStatus.METHOD_NOT_ALLOWED:
          return new ApiError('method_not_allowed', `Method "${request.method}" not allowed.`);
        case HttpStatus.PAYLOAD_TOO_LARGE:
          return new ApiError('payload_too_large', 'Request body is too large.');
        case HttpStatus.BAD_REQUEST:
          return new ApiError('parse_error', exception.message);
        default:
          break;
      }
    }
    return new ApiError('error', 'A server error occurred.');
  }
}

/**
 * SECURITY: QueryFailedError carries the statement's parameters and pino logs every own property,
 * which would write an app URL's private token or sealed secrets to the log.
 */
export function withoutQueryValues(exception: unknown): unknown {
  if (!(exception instanceof Error) || !('parameters' in exception || 'query' in exception)) return exception;
  const copy = new Error(exception.message);
  copy.name = exception.name;
  copy.stack = exception.stack;
  const { code } = exception as { code?: unknown };
  if (code !== undefined) Object.assign(copy, { code });
  return copy;
}

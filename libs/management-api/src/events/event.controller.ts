import { applyDecorators, Controller, HttpStatus, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, type ApiQueryOptions, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Access, Caller, AccessContext, requireProject } from '../auth/access.decorator';
import { RequestUrl } from '../common/request-url.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import { ApiCursorPage, ApiModelResponse } from '../schema/api-responses.decorator';
import { toCsv } from './csv.util';
import { EventUuidPipe } from './event-id.pipe';
import {
  DEFAULT_CSV_LIMIT,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  MAX_OFFSET,
  parseEventListRequest,
  type ResponseFormat,
} from './event-list-request.util';
import { EventListQueryDto, EventValuesQueryDto } from './event-query.dto';
import { EventPropertyValueResponse, EventRecord, EventSelectPageResponse } from './event.presenter';
import { EventService, type NextPage } from './event.service';
import { ResponseFormatParam } from './response-format.decorator';

const FORMAT: ApiQueryOptions = {
  name: 'format',
  required: false,
  enum: ['json', 'csv'],
  description: 'json (the default), or csv (also chosen by Accept: text/csv)',
};

/** The listing's parameters (event-list-request.util.ts), with what it takes of each. */
const LIST_PARAMETERS: ApiQueryOptions[] = [
  {
    name: 'after',
    type: String,
    description: 'Only events after this time: ISO 8601, or relative such as -7d',
  },
  { name: 'before', type: String, description: 'Only events before this time (default: now + 5 s)' },
  { name: 'distinct_id', type: String, description: 'Only events of this distinct id' },
  { name: 'event', type: String, description: 'Only events with this name' },
  { name: 'person_id', type: String, description: "Only events of this person's distinct ids (id or UUID)" },
  {
    name: 'properties',
    type: String,
    description:
      'JSON property filters: a list of {key, value, operator, type}, an AND/OR group, or the legacy object',
  },
  {
    name: 'select',
    type: String,
    description: 'JSON array of HogQL expressions to return instead of event records (a page of rows)',
  },
  { name: 'where', type: String, description: 'JSON array of HogQL conditions every event must pass' },
  {
    name: 'orderBy',
    enum: ['["-timestamp"]', '["timestamp"]'],
    description: 'Newest first (the default) or oldest first',
  },
  FORMAT,
  {
    name: 'limit',
    type: 'integer',
    minimum: 1,
    description: `Page size: ${DEFAULT_LIMIT} by default (${DEFAULT_CSV_LIMIT} for CSV), at most ${MAX_LIMIT} (a larger one is capped)`,
  },
  {
    name: 'offset',
    type: 'integer',
    minimum: 0,
    maximum: MAX_OFFSET,
    description: 'Rows to skip before the page (0 by default): page further with `next`',
  },
];

function listParameters(): MethodDecorator {
  return applyDecorators(...LIST_PARAMETERS.map((options) => ApiQuery({ required: false, ...options })));
}

/** The absolute URL of this request with some query parameters replaced (undefined removes one). */
function withParams(requestUrl: URL, changes: Record<string, string | undefined>): string {
  const url = new URL(requestUrl);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  return url.toString();
}

function nextUrl(url: URL, next: NextPage): string | null {
  if (next === null) return null;
  // A cursor page starts past the last event served: an offset there would skip events.
  return 'cursor' in next
    ? withParams(url, { cursor: next.cursor, offset: undefined })
    : withParams(url, { offset: String(next.offset) });
}

function send(response: Response, format: 'json' | 'csv', body: unknown, csvRows: readonly unknown[]): void {
  if (format === 'csv') {
    response.type('text/csv; charset=utf-8').send(toCsv(csvRows));
    return;
  }
  response.json(body);
}

/**
 * PostHog's deprecated event listing, read from ClickHouse. Every query is bound to the project of
 * the route, which the access guard has checked the key may reach.
 */
@ApiTags('events')
@Controller(projectScoped('events'))
export class EventController {
  constructor(private readonly events: EventService) {}

  @Get()
  @ApiOperation({
    summary: 'List events, newest first, in pages of {next, results} (deprecated: kept for compatibility)',
  })
  @listParameters()
  @ApiCursorPage(EventRecord, {
    previous: false,
    csv: true,
    alternatives: [EventSelectPageResponse],
    description: 'A page of events, or of rows with `select`; as CSV, the rows without links',
  })
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  async list(
    @ResponseFormatParam() format: ResponseFormat,
    @Caller() caller: AccessContext,
    @Query() query: EventListQueryDto,
    @RequestUrl() url: URL,
    @Res() response: Response,
  ): Promise<void> {
    const listRequest = parseEventListRequest(query, format);
    const page = await this.events.list(requireProject(caller).team.id, listRequest);
    const next = listRequest.format === 'csv' ? null : nextUrl(url, page.next);
    if (page.kind === 'events') {
      send(response, listRequest.format, { next, results: page.results }, page.results);
      return;
    }
    const { columns, types, results } = page;
    send(
      response,
      listRequest.format,
      { next, results, columns, types },
      results.map((row) => Object.fromEntries(columns.map((column, index) => [column, row[index]]))),
    );
  }

  @Get('values')
  @ApiOperation({ summary: 'Distinct values of an event property (or event names with key=custom_event)' })
  @ApiQuery({
    name: 'key',
    required: true,
    type: String,
    description: 'The property (or, with is_column=true, the column); custom_event for event names',
  })
  @ApiQuery({ name: 'value', required: false, type: String, description: 'Only values containing this' })
  @ApiQuery({
    name: 'event_name',
    required: false,
    type: String,
    isArray: true,
    description: 'Only values of these events (repeatable)',
  })
  @ApiQuery({
    name: 'is_column',
    required: false,
    enum: ['true', 'false'],
    description: 'true: key names a column of events, not a property',
  })
  @ApiQuery(FORMAT)
  @ApiModelResponse(EventPropertyValueResponse, HttpStatus.OK, {
    isArray: true,
    csv: true,
    description: 'At most 10 values seen in the last 7 days (or the project’s own event names)',
  })
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  async values(
    @ResponseFormatParam() format: ResponseFormat,
    @Caller() caller: AccessContext,
    @Query() query: EventValuesQueryDto,
    @Res() response: Response,
  ): Promise<void> {
    const values = await this.events.values(requireProject(caller).team.id, query);
    response.setHeader('Cache-Control', 'max-age=10');
    send(response, format, values, values);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event by its UUID' })
  @ApiQuery(FORMAT)
  @ApiModelResponse(EventRecord, HttpStatus.OK, { csv: true })
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  async retrieve(
    @ResponseFormatParam() format: ResponseFormat,
    @Caller() caller: AccessContext,
    @Param('id', EventUuidPipe) id: string,
    @Res() response: Response,
  ): Promise<void> {
    const event = await this.events.retrieve(requireProject(caller).team.id, id);
    send(response, format, event, [event]);
  }
}

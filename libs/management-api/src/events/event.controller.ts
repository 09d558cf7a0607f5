import { Controller, Get, Headers, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireProject } from '../auth/access-context';
import { publicRequestUrl } from '../common/public-url.util';
import { projectScoped } from '../routes/project-scoped-paths';
import { toCsv } from './csv.util';
import { formatOf, parseEventListRequest, type QueryValues } from './event-list.request';
import { EventService, type NextPage } from './event.service';

const LIST_PARAMETERS: { name: string; description: string }[] = [
  { name: 'after', description: 'Only events after this time: ISO 8601, or relative such as -7d' },
  { name: 'before', description: 'Only events before this time (default: now + 5 s)' },
  { name: 'distinct_id', description: 'Only events of this distinct id' },
  { name: 'event', description: 'Only events with this name' },
  { name: 'person_id', description: "Only events of this person's distinct ids (id or UUID)" },
  {
    name: 'properties',
    description:
      'JSON property filters: a list of {key, value, operator, type}, an AND/OR group, or the legacy object',
  },
  { name: 'select', description: 'JSON array of HogQL expressions to return instead of event records' },
  { name: 'where', description: 'JSON array of HogQL conditions every event must pass' },
  { name: 'orderBy', description: '["-timestamp"] (newest first, the default) or ["timestamp"]' },
  { name: 'format', description: 'json (default) or csv' },
  { name: 'limit', description: 'Page size: 100 by default (3,500 for CSV), at most 50,000' },
  { name: 'offset', description: 'Rows to skip before the page' },
  { name: 'cursor', description: "Where the page starts: copied from the previous page's next link" },
];

function listParameters(): MethodDecorator {
  return (target, key, descriptor) => {
    for (const { name, description } of LIST_PARAMETERS) {
      ApiQuery({ name, description, required: false, type: String })(target, key, descriptor);
    }
  };
}

/** The absolute URL of this request with some query parameters replaced (undefined removes one). */
function withParams(request: Request, changes: Record<string, string | undefined>): string {
  const url = publicRequestUrl(request);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  return url.toString();
}

function nextUrl(request: Request, next: NextPage): string | null {
  if (next === null) return null;
  // A cursor page starts past the last event served: an offset there would skip events.
  return 'cursor' in next
    ? withParams(request, { cursor: next.cursor, offset: undefined })
    : withParams(request, { offset: String(next.offset) });
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
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  async list(
    @Caller() caller: AccessContext,
    @Query() query: QueryValues,
    @Headers('accept') accept: string | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const listRequest = parseEventListRequest(query, accept);
    const page = await this.events.list(requireProject(caller).team.id, listRequest);
    const next = listRequest.format === 'csv' ? null : nextUrl(request, page.next);
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
  @ApiQuery({ name: 'key', required: true, type: String })
  @ApiQuery({ name: 'value', required: false, type: String })
  @ApiQuery({ name: 'event_name', required: false, type: String, isArray: true })
  @ApiQuery({ name: 'is_column', required: false, type: Boolean })
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  async values(
    @Caller() caller: AccessContext,
    @Query() query: QueryValues,
    @Headers('accept') accept: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    const format = formatOf(query, accept);
    const values = await this.events.values(requireProject(caller).team.id, query);
    response.setHeader('Cache-Control', 'max-age=10');
    send(response, format, values, values);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event by its UUID' })
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  async retrieve(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @Query() query: QueryValues,
    @Headers('accept') accept: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    const format = formatOf(query, accept);
    const event = await this.events.retrieve(requireProject(caller).team.id, id);
    send(response, format, event, [event]);
  }
}

import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, Caller, AccessContext, requireProject, type AccessRule } from '../auth/access.decorator';
import { AnswersStatuses } from '../common/answers-statuses.decorator';
import { ResponseStatus, type SetResponseStatus } from '../common/response-status.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import { ApiModelResponse } from '../schema/api-responses.decorator';
import { QueryRequestDto } from './query.dto';
import {
  HogQLQueryResponse,
  QueryCacheMissResponse,
  QueryCancelResponse,
  QueryStatusEnvelope,
} from './query.presenter';
import { QueryService } from './query.service';

// PostHog's QueryViewSet counts every action as a read, cancelling included.
const READ: AccessRule = { scope: 'query:read', projectParam: 'project_id' };

/** PostHog's Query API; every query reads only the project of the route. */
@ApiTags('query')
@Controller(projectScoped('query'))
export class QueryController {
  constructor(private readonly queries: QueryService) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @AnswersStatuses(HttpStatus.OK, HttpStatus.ACCEPTED)
  @ApiOperation({
    summary: 'Run a query (HogQLQuery) over the project: its answer (200), or an async query started (202)',
  })
  @ApiModelResponse(HogQLQueryResponse)
  @ApiModelResponse(QueryCacheMissResponse, HttpStatus.ACCEPTED, {
    description:
      'An async refresh started (refresh "async", force_async, lazy_async): poll its query_status.id. With a stale answer cached, that answer with the query_status',
    alternatives: [HogQLQueryResponse],
  })
  @Access(READ)
  async run(
    @Caller() caller: AccessContext,
    @Body() request: QueryRequestDto,
    @ResponseStatus() setStatus: SetResponseStatus,
  ): Promise<object> {
    const answer = await this.queries.run(requireProject(caller).team, request);
    // PostHog: 202 while the query_status says the query is still running.
    setStatus(answer.query_status && !answer.query_status.complete ? HttpStatus.ACCEPTED : HttpStatus.OK);
    return answer;
  }

  @Get(':id')
  @AnswersStatuses(HttpStatus.OK, HttpStatus.ACCEPTED)
  @ApiOperation({ summary: "An async query's status; its results once complete" })
  @ApiModelResponse(QueryStatusEnvelope, HttpStatus.OK, { description: 'Complete' })
  @ApiModelResponse(QueryStatusEnvelope, HttpStatus.ACCEPTED, { description: 'Still running' })
  @Access(READ)
  status(
    @Caller() caller: AccessContext,
    @Param('id') id: string,
    @ResponseStatus() setStatus: SetResponseStatus,
  ): QueryStatusEnvelope {
    const status = this.queries.status(requireProject(caller).team, id);
    // PostHog: 400 when the query failed for a reason the user can act on, 500 otherwise.
    setStatus(
      status.error
        ? status.error_message
          ? HttpStatus.BAD_REQUEST
          : HttpStatus.INTERNAL_SERVER_ERROR
        : status.complete
          ? HttpStatus.OK
          : HttpStatus.ACCEPTED,
    );
    return { query_status: status };
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Cancel an async query: its ClickHouse query is stopped' })
  @ApiModelResponse(QueryCancelResponse)
  @Access(READ)
  async cancel(@Caller() caller: AccessContext, @Param('id') id: string): Promise<QueryCancelResponse> {
    return { message: await this.queries.cancel(requireProject(caller).team, id) };
  }
}

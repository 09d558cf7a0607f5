import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, Caller, AccessContext, requireProject } from '../auth/access.decorator';
import { projectScoped } from '../routes/project-scoped-paths.util';
import { ApiModelResponse } from '../schema/api-responses.decorator';
import { QueryRequestDto } from './query.dto';
import { HogQLQueryResponse } from './query.presenter';
import { QueryService } from './query.service';

/** PostHog's Query API; every query reads only the project of the route. */
@ApiTags('query')
@Controller(projectScoped('query'))
export class QueryController {
  constructor(private readonly queries: QueryService) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Run a query (HogQLQuery) over the project and answer its rows' })
  @ApiModelResponse(HogQLQueryResponse)
  @Access({ scope: 'query:read', projectParam: 'project_id' })
  run(@Caller() caller: AccessContext, @Body() request: QueryRequestDto): Promise<HogQLQueryResponse> {
    return this.queries.run(requireProject(caller).team, request);
  }
}

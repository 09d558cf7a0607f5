import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Access, Caller, type AccessContext } from '../auth/access.decorator';
import { notFound } from '../common/api.error';
import { ApiModelResponse } from '../schema/api-responses.decorator';
import {
  CurrentUserResponse,
  PersonalApiKeyResponse,
  presentCurrentUser,
  presentPersonalApiKey,
} from './user.presenter';

@ApiTags('users')
@Controller('api')
export class UserController {
  @Get('users/@me')
  @ApiOperation({ summary: 'The user the personal API key acts for' })
  @ApiModelResponse(CurrentUserResponse)
  @Access({ scope: 'user:read' })
  me(@Caller() caller: AccessContext): CurrentUserResponse {
    return presentCurrentUser(caller.user);
  }

  /** With a personal API key PostHog allows only `@current`: the key used for the request. */
  @Get('personal_api_keys/:id')
  @ApiOperation({ summary: 'The personal API key of the request (`@current`, or its own id)' })
  @ApiParam({ name: 'id', description: '`@current`, or the id of the key the request is made with' })
  @ApiModelResponse(PersonalApiKeyResponse)
  @Access({ scope: 'user:read' })
  currentKey(@Caller() caller: AccessContext, @Param('id') id: string): PersonalApiKeyResponse {
    const { apiKey } = caller;
    if (id !== '@current' && id !== apiKey.id) throw notFound();
    return presentPersonalApiKey(apiKey);
  }
}

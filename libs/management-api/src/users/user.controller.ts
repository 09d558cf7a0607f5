import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, Caller } from '../auth/access.decorator';
import type { AccessContext } from '../auth/access-context';
import { notFound } from '../common/api-error';
import { iso } from '../common/iso.util';
import { presentUserBasic } from './user.presenter';

@ApiTags('users')
@Controller('api')
export class UserController {
  @Get('users/@me')
  @ApiOperation({ summary: 'The user the personal API key acts for' })
  @Access({ scope: 'user:read' })
  me(@Caller() caller: AccessContext) {
    return {
      ...presentUserBasic(caller.user),
      organization: caller.user.currentOrganizationId ? { id: caller.user.currentOrganizationId } : null,
      team: caller.user.currentTeamId ? { id: caller.user.currentTeamId } : null,
    };
  }

  /** With a personal API key PostHog allows only `@current`: the key used for the request. */
  @Get('personal_api_keys/:id')
  @Access({ scope: 'user:read' })
  currentKey(@Caller() caller: AccessContext, @Param('id') id: string) {
    const { apiKey } = caller;
    if (id !== '@current' && id !== apiKey.id) throw notFound();
    return {
      id: apiKey.id,
      label: apiKey.label,
      mask_value: apiKey.maskValue,
      created_at: iso(apiKey.createdAt),
      last_used_at: iso(apiKey.lastUsedAt),
      last_rolled_at: iso(apiKey.lastRolledAt),
      user_id: apiKey.userId,
      scopes: apiKey.scopes?.length ? apiKey.scopes : ['*'],
      scoped_teams: apiKey.scopedTeams ?? [],
      scoped_organizations: apiKey.scopedOrganizations ?? [],
    };
  }
}

import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireOrganization } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { CreateInviteDto } from './invite.dto';
import { InviteService } from './invite.service';

@ApiTags('invites')
@Controller('api/organizations/:organization_id/invites')
export class InviteController {
  constructor(private readonly invites: InviteService) {}

  @Get()
  @Access({ scope: 'organization_member:read', organizationParam: 'organization_id' })
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const page = pageRequestFrom(query);
    const { count, results } = await this.invites.list(requireOrganization(caller), page);
    return toPage(request, page, count, results);
  }

  @Post()
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  create(@Caller() caller: AccessContext, @Body() dto: CreateInviteDto) {
    return this.invites.create(caller, requireOrganization(caller), dto);
  }

  @Post('bulk')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create up to 20 invites at once (a JSON array), or one (a JSON object)' })
  @ApiBody({
    schema: {
      oneOf: [
        { type: 'array', maxItems: 20, items: { $ref: '#/components/schemas/CreateInviteDto' } },
        { $ref: '#/components/schemas/CreateInviteDto' },
      ],
    },
  })
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  bulk(@Caller() caller: AccessContext, @Body() body: unknown) {
    return this.invites.bulk(caller, requireOrganization(caller), body);
  }

  @Delete(':id')
  @HttpCode(204)
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  async remove(@Caller() caller: AccessContext, @Param('id') id: string): Promise<void> {
    await this.invites.remove(caller.user, requireOrganization(caller), id);
  }
}

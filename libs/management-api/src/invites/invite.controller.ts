import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, Caller, AccessContext, requireOrganization } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { UuidParam } from '../common/path-params.pipe';
import { RequestUrl } from '../common/request-url.decorator';
import {
  ApiModelOrListResponse,
  ApiModelResponse,
  ApiNoContent,
  ApiPage,
} from '../schema/api-responses.decorator';
import { CreateInviteDto } from './invite.dto';
import { InviteResponse } from './invite.presenter';
import { InviteService } from './invite.service';

@ApiTags('invites')
@Controller('api/organizations/:organization_id/invites')
export class InviteController {
  constructor(private readonly invites: InviteService) {}

  @Get()
  @ApiOperation({ summary: "The organization's invites, newest first" })
  @ApiPage(InviteResponse)
  @Access({ scope: 'organization_member:read', organizationParam: 'organization_id' })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<InviteResponse>> {
    const { page } = query;
    const { count, results } = await this.invites.list(requireOrganization(caller), page);
    return toPage(url, page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Invite someone by e-mail (sent when SMTP is configured)' })
  @ApiModelResponse(InviteResponse, 201)
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  create(@Caller() caller: AccessContext, @Body() dto: CreateInviteDto): Promise<InviteResponse> {
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
  @ApiModelOrListResponse(InviteResponse, 200, 'The invite, or the invites in the order sent')
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  bulk(@Caller() caller: AccessContext, @Body() body: unknown): Promise<InviteResponse | InviteResponse[]> {
    return this.invites.bulk(caller, requireOrganization(caller), body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an invite (an admin any, a member those they sent)' })
  @ApiNoContent()
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  async remove(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<void> {
    await this.invites.remove(caller.user, requireOrganization(caller), id);
  }
}

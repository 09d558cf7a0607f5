import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Query, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Access, Caller } from '../auth/access.decorator';
import { AccessContext, requireOrganization } from '../auth/access-context';
import { pageRequestFrom, toPage } from '../common/pagination.util';
import { UpdateMemberDto } from './member.dto';
import { MemberService } from './member.service';

@ApiTags('members')
@Controller('api/organizations/:organization_id/members')
export class MemberController {
  constructor(private readonly members: MemberService) {}

  @Get()
  @Access({ scope: 'organization_member:read', organizationParam: 'organization_id' })
  async list(
    @Caller() caller: AccessContext,
    @Req() request: Request,
    @Query() query: Record<string, unknown>,
  ) {
    const page = pageRequestFrom(query);
    const email = typeof query.email === 'string' ? query.email : undefined;
    const { count, results } = await this.members.list(requireOrganization(caller), page, { email });
    return toPage(request, page, count, results);
  }

  /** The level rules are PostHog's validate_update, applied by the service. */
  @Patch(':user__uuid')
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  update(
    @Caller() caller: AccessContext,
    @Param('user__uuid') userUuid: string,
    @Body() dto: UpdateMemberDto,
  ) {
    return this.members.update(caller, requireOrganization(caller), userUuid, dto.level);
  }

  @Delete(':user__uuid')
  @HttpCode(204)
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  async remove(@Caller() caller: AccessContext, @Param('user__uuid') userUuid: string): Promise<void> {
    await this.members.remove(caller, requireOrganization(caller), userUuid);
  }
}

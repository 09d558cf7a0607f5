import { Body, Controller, Delete, Get, HttpCode, Patch, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Access, Caller, AccessContext, requireOrganization } from '../auth/access.decorator';
import { Page, toPage } from '../common/pagination.util';
import { RequestUrl } from '../common/request-url.decorator';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { MemberUuidOrNullParam, MemberUuidParam } from './member-uuid.pipe';
import { MemberListQueryDto, UpdateMemberDto } from './member.dto';
import { MemberResponse } from './member.presenter';
import { MemberService } from './member.service';

const UserUuid = () => ApiParam({ name: 'user__uuid', description: "The member's user UUID" });

@ApiTags('members')
@Controller('api/organizations/:organization_id/members')
export class MemberController {
  constructor(private readonly members: MemberService) {}

  @Get()
  @ApiOperation({ summary: "The organization's members, newest first" })
  @ApiPage(MemberResponse)
  @ApiQuery({ name: 'email', required: false, type: String, description: 'Only the member with this e-mail' })
  @Access({ scope: 'organization_member:read', organizationParam: 'organization_id' })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: MemberListQueryDto,
  ): Promise<Page<MemberResponse>> {
    const { page, email } = query;
    const { count, results } = await this.members.list(requireOrganization(caller), page, { email });
    return toPage(url, page, count, results);
  }

  /** The level rules are PostHog's validate_update, applied by the service. */
  @Patch(':user__uuid')
  @UserUuid()
  @ApiOperation({ summary: "Change a member's level" })
  @ApiModelResponse(MemberResponse)
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  update(
    @Caller() caller: AccessContext,
    @MemberUuidOrNullParam('user__uuid') userUuid: string | null,
    @Body() dto: UpdateMemberDto,
  ): Promise<MemberResponse> {
    return this.members.update(caller, requireOrganization(caller), userUuid, dto.level);
  }

  @Delete(':user__uuid')
  @HttpCode(204)
  @UserUuid()
  @ApiOperation({ summary: 'Remove a member (or leave, with your own UUID)' })
  @ApiNoContent()
  @Access({ scope: 'organization_member:write', organizationParam: 'organization_id' })
  async remove(
    @Caller() caller: AccessContext,
    @MemberUuidParam('user__uuid') userUuid: string,
  ): Promise<void> {
    await this.members.remove(caller, requireOrganization(caller), userUuid);
  }
}

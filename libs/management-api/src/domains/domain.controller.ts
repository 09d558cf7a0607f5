import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MembershipLevel } from '@hogbase/postgres';
import { Access, Caller, AccessContext, requireOrganization } from '../auth/access.decorator';
import { PageQueryDto } from '../common/page-query.dto';
import { Page, toPage } from '../common/pagination.util';
import { UuidOrNullParam, UuidParam } from '../common/path-params.pipe';
import { RequestUrl } from '../common/request-url.decorator';
import { ApiModelResponse, ApiNoContent, ApiPage } from '../schema/api-responses.decorator';
import { CreateDomainDto, UpdateDomainDto } from './domain.dto';
import { DomainResponse } from './domain.presenter';
import { DomainService } from './domain.service';

const ORGANIZATION = 'organization_id';

@ApiTags('domains')
@Controller('api/organizations/:organization_id/domains')
export class DomainController {
  constructor(private readonly domains: DomainService) {}

  @Get()
  @ApiOperation({ summary: "The organization's domains" })
  @ApiPage(DomainResponse)
  @Access({ scope: 'organization:read', organizationParam: ORGANIZATION })
  async list(
    @Caller() caller: AccessContext,
    @RequestUrl() url: URL,
    @Query() query: PageQueryDto,
  ): Promise<Page<DomainResponse>> {
    const { page } = query;
    const { count, results } = await this.domains.list(requireOrganization(caller), page);
    return toPage(url, page, count, results);
  }

  @Post()
  @ApiOperation({ summary: 'Add a domain (admin), to verify with a DNS TXT record' })
  @ApiModelResponse(DomainResponse, 201)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION, level: MembershipLevel.Admin })
  create(@Caller() caller: AccessContext, @Body() dto: CreateDomainDto): Promise<DomainResponse> {
    return this.domains.create(requireOrganization(caller), dto);
  }

  @Get(':id')
  @ApiModelResponse(DomainResponse)
  @Access({ scope: 'organization:read', organizationParam: ORGANIZATION })
  retrieve(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<DomainResponse> {
    return this.domains.retrieve(requireOrganization(caller), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update a domain (admin); a new name must be verified again' })
  @ApiModelResponse(DomainResponse)
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION, level: MembershipLevel.Admin })
  update(
    @Caller() caller: AccessContext,
    @UuidOrNullParam('id') id: string | null,
    @Body() dto: UpdateDomainDto,
  ): Promise<DomainResponse> {
    return this.domains.update(requireOrganization(caller), id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a domain (admin)' })
  @ApiNoContent()
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION, level: MembershipLevel.Admin })
  async remove(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<void> {
    await this.domains.remove(requireOrganization(caller), id);
  }

  @Post(':id/verify')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Look up the TXT record _posthog-challenge.<domain> and mark the domain verified',
  })
  @ApiModelResponse(DomainResponse, 200, { description: 'The domain, verified or not' })
  @Access({ scope: 'organization:write', organizationParam: ORGANIZATION, level: MembershipLevel.Admin })
  verify(@Caller() caller: AccessContext, @UuidParam('id') id: string): Promise<DomainResponse> {
    return this.domains.verify(requireOrganization(caller), id);
  }
}

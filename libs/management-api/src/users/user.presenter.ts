import { ApiProperty } from '@nestjs/swagger';
import type { PersonalApiKey, User } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel, DATE_TIME, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';

/** PostHog's UserBasic, embedded wherever another resource names a user. */
@ApiModel('UserBasic')
export class UserBasicResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ format: 'uuid' })
  uuid!: string;

  @ApiProperty()
  distinct_id!: string;

  @ApiProperty()
  first_name!: string;

  @ApiProperty()
  last_name!: string;

  @ApiProperty()
  email!: string;

  @ApiProperty()
  is_email_verified!: boolean;

  @ApiProperty({ ...FREE_FORM_OBJECT, nullable: true })
  hedgehog_config!: Record<string, unknown> | null;

  @ApiProperty({ type: String, nullable: true })
  role_at_organization!: string | null;
}

export function presentUserBasic(user: User): UserBasicResponse {
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.distinctId,
    first_name: user.firstName,
    last_name: user.lastName,
    email: user.email,
    is_email_verified: user.isEmailVerified,
    hedgehog_config: user.hedgehogConfig,
    role_at_organization: null,
  };
}

@ApiModel('CurrentOrganizationReference')
export class CurrentOrganizationReference {
  @ApiProperty({ format: 'uuid' })
  id!: string;
}

@ApiModel('CurrentProjectReference')
export class CurrentProjectReference {
  @ApiProperty({ type: 'integer' })
  id!: number;
}

/** `users/@me`: the key's user, with the organization and project `@current` stands for. */
@ApiModel('CurrentUser')
export class CurrentUserResponse extends UserBasicResponse {
  @ApiProperty({ type: () => CurrentOrganizationReference, nullable: true })
  organization!: CurrentOrganizationReference | null;

  @ApiProperty({ type: () => CurrentProjectReference, nullable: true })
  team!: CurrentProjectReference | null;
}

export function presentCurrentUser(user: User): CurrentUserResponse {
  return {
    ...presentUserBasic(user),
    organization: user.currentOrganizationId ? { id: user.currentOrganizationId } : null,
    team: user.currentTeamId ? { id: user.currentTeamId } : null,
  };
}

/** PostHog's PersonalAPIKeySerializer, without the value (shown only when a key is created). */
@ApiModel('PersonalAPIKey')
export class PersonalApiKeyResponse {
  @ApiProperty()
  id!: string;

  @ApiProperty()
  label!: string;

  @ApiProperty({ description: 'The first and last characters of the key' })
  mask_value!: string;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  last_used_at!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  last_rolled_at!: string | null;

  @ApiProperty({ type: 'integer' })
  user_id!: number;

  @ApiProperty({ type: [String], description: '`["*"]` for a key with every scope' })
  scopes!: string[];

  @ApiProperty({ type: 'integer', isArray: true })
  scoped_teams!: number[];

  @ApiProperty({ type: [String] })
  scoped_organizations!: string[];
}

export function presentPersonalApiKey(apiKey: PersonalApiKey): PersonalApiKeyResponse {
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

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { messages } from '../common/messages.constants';

/** PostHog's domain pattern: lowercase labels, a TLD of two or more letters. */
export const DOMAIN_PATTERN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;
export const SSO_ENFORCEMENT_CHOICES = ['', 'google-oauth2', 'github', 'gitlab', 'saml'] as const;
const INVALID_DOMAIN = 'Please enter a valid domain or subdomain name.';

class DomainFieldsDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  jit_provisioning_enabled?: boolean;

  @ApiPropertyOptional({ enum: SSO_ENFORCEMENT_CHOICES })
  @IsOptional()
  @IsIn(SSO_ENFORCEMENT_CHOICES, { message: (args) => messages.choice(args.value) })
  sso_enforcement?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 512 })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsString({ message: messages.string })
  @MaxLength(512, { message: messages.maxLength(512) })
  saml_entity_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 512 })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsString({ message: messages.string })
  @MaxLength(512, { message: messages.maxLength(512) })
  saml_acs_url?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 65_536 })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsString({ message: messages.string })
  @MaxLength(65_536, { message: messages.maxLength(65_536) })
  saml_x509_cert?: string | null;
}

export class CreateDomainDto extends DomainFieldsDto {
  @ApiProperty({ example: 'example.com', maxLength: 128, pattern: DOMAIN_PATTERN.source })
  @IsDefined({ message: messages.required })
  @IsString({ message: messages.string })
  @MaxLength(128, { message: messages.maxLength(128) })
  @Matches(DOMAIN_PATTERN, { message: INVALID_DOMAIN })
  domain!: string;
}

export class UpdateDomainDto extends DomainFieldsDto {
  @ApiPropertyOptional({ example: 'example.com', maxLength: 128, pattern: DOMAIN_PATTERN.source })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsString({ message: messages.string })
  @MaxLength(128, { message: messages.maxLength(128) })
  @Matches(DOMAIN_PATTERN, { message: INVALID_DOMAIN })
  domain?: string;
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsTimeZone,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { messages } from '../common/messages';

export class CreateProjectDto {
  @ApiProperty({ maxLength: 200 })
  @IsDefined({ message: messages.required })
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name!: string;

  @ApiPropertyOptional({ example: 'UTC' })
  @IsOptional()
  @IsString({ message: messages.string })
  @IsTimeZone({ message: (args) => messages.choice(args.value) })
  timezone?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray({ message: 'Expected a list of items.' })
  @ArrayMaxSize(100)
  @IsString({ each: true, message: messages.string })
  app_urls?: string[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  anonymize_ips?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  is_demo?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  completed_snippet_onboarding?: boolean;
}

export class UpdateProjectDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name?: string;

  @ApiPropertyOptional({ example: 'UTC' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsString({ message: messages.string })
  @IsTimeZone({ message: (args) => messages.choice(args.value) })
  timezone?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray({ message: 'Expected a list of items.' })
  @ArrayMaxSize(100)
  @IsString({ each: true, message: messages.string })
  app_urls?: string[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  anonymize_ips?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  completed_snippet_onboarding?: boolean;
}

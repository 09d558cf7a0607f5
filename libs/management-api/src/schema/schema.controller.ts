import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Access } from '../auth/access.decorator';
import { OpenApiDocument } from './openapi-document.service';

@ApiExcludeController()
@Controller('api/schema')
export class SchemaController {
  constructor(private readonly openApi: OpenApiDocument) {}

  @Get()
  @Access({ scope: 'public' })
  schema() {
    return this.openApi.document;
  }
}

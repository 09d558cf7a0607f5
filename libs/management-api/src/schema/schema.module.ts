import { Module } from '@nestjs/common';
import { OpenApiDocument } from './openapi-document.service';
import { SchemaController } from './schema.controller';

@Module({ controllers: [SchemaController], providers: [OpenApiDocument] })
export class SchemaModule {}

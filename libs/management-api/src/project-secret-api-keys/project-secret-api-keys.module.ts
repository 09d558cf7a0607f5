import { Module } from '@nestjs/common';
import { ProjectSecretApiKeyController } from './project-secret-api-key.controller';
import { ProjectSecretApiKeyService } from './project-secret-api-key.service';

@Module({ controllers: [ProjectSecretApiKeyController], providers: [ProjectSecretApiKeyService] })
export class ProjectSecretApiKeysModule {}

import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module';
import { ProjectSecretApiKeyController } from './project-secret-api-key.controller';
import { ProjectSecretApiKeyRepository } from './project-secret-api-key.repository';
import { ProjectSecretApiKeyService } from './project-secret-api-key.service';

@Module({
  imports: [ProjectsModule],
  controllers: [ProjectSecretApiKeyController],
  providers: [ProjectSecretApiKeyService, ProjectSecretApiKeyRepository],
})
export class ProjectSecretApiKeysModule {}

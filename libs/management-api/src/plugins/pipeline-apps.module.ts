import { Module } from '@nestjs/common';
import { ActivityModule } from '../activity/activity.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { PipelineAppActionController, PipelineAppController } from './pipeline-app.controller';
import { PluginActivityService } from './plugin-activity.service';
import { PluginAttachmentRepository } from './plugin-attachment.repository';
import { PluginCatalogService } from './plugin-catalog.service';
import { PluginConfigSecrets } from './plugin-config-secrets.service';
import { PluginConfigController } from './plugin-config.controller';
import { PluginConfigRepository } from './plugin-config.repository';
import { PluginConfigService } from './plugin-config.service';
import { PluginInstaller } from './plugin-installer.service';
import { PluginLogEntryRepository } from './plugin-log-entry.repository';
import { PluginRepository } from './plugin.repository';
import { PluginService } from './plugin.service';
import { PluginSourceFileRepository } from './plugin-source-file.repository';
import { PluginSourceService } from './plugin-source.service';

/** Pipeline apps (PostHog's plugins): the organization's apps and each project's configs of them. */
@Module({
  imports: [ActivityModule, OrganizationsModule],
  controllers: [PipelineAppActionController, PipelineAppController, PluginConfigController],
  providers: [
    PluginRepository,
    PluginSourceFileRepository,
    PluginConfigRepository,
    PluginAttachmentRepository,
    PluginLogEntryRepository,
    PluginInstaller,
    PluginCatalogService,
    PluginActivityService,
    PluginConfigSecrets,
    PluginService,
    PluginSourceService,
    PluginConfigService,
  ],
  exports: [PluginRepository],
})
export class PipelineAppsModule {}

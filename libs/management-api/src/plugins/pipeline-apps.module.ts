import { Module } from '@nestjs/common';
import { ActivityModule } from '../activity/activity.module';
import { PipelineAppActionController, PipelineAppController } from './pipeline-app.controller';
import { PluginActivityService } from './plugin-activity.service';
import { PluginCatalogService } from './plugin-catalog.service';
import { PluginConfigSecrets } from './plugin-config-secrets.service';
import { PluginConfigController } from './plugin-config.controller';
import { PluginConfigService } from './plugin-config.service';
import { PluginInstaller } from './plugin-installer.service';
import { PluginSourceService } from './plugin-source.service';
import { PluginService } from './plugin.service';

/** Pipeline apps (PostHog's plugins): the organization's apps and each project's configs of them. */
@Module({
  imports: [ActivityModule],
  controllers: [PipelineAppActionController, PipelineAppController, PluginConfigController],
  providers: [
    PluginInstaller,
    PluginCatalogService,
    PluginActivityService,
    PluginConfigSecrets,
    PluginService,
    PluginSourceService,
    PluginConfigService,
  ],
})
export class PipelineAppsModule {}

import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { ProjectsModule } from '../projects/projects.module';
import { BatchExportBackfillRepository } from './batch-export-backfill.repository';
import { BatchExportEventsRepository } from './batch-export-events.repository';
import { BatchExportRunRepository } from './batch-export-run.repository';
import { BatchExportRunsService } from './batch-export-runs.service';
import { BatchExportSecrets } from './batch-export-secrets.service';
import { BatchExportController } from './batch-export.controller';
import { BatchExportRepository } from './batch-export.repository';
import { BatchExportService } from './batch-export.service';

@Module({
  imports: [EventsModule, ProjectsModule],
  controllers: [BatchExportController],
  providers: [
    BatchExportSecrets,
    BatchExportRepository,
    BatchExportRunRepository,
    BatchExportBackfillRepository,
    BatchExportEventsRepository,
    BatchExportService,
    BatchExportRunsService,
  ],
})
export class BatchExportsModule {}

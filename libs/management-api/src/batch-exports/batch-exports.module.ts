import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { BatchExportRunsService } from './batch-export-runs.service';
import { BatchExportSecrets } from './batch-export-secrets.service';
import { BatchExportController } from './batch-export.controller';
import { BatchExportService } from './batch-export.service';

@Module({
  imports: [EventsModule],
  controllers: [BatchExportController],
  providers: [BatchExportSecrets, BatchExportService, BatchExportRunsService],
})
export class BatchExportsModule {}

import { Module } from '@nestjs/common';
import { ActivityLogRepository } from './activity-log.repository';
import { ActivityLogService } from './activity-log.service';

@Module({ providers: [ActivityLogRepository, ActivityLogService], exports: [ActivityLogService] })
export class ActivityModule {}

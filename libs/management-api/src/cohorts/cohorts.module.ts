import { Module } from '@nestjs/common';
import { CohortRepository } from './cohort.repository';

@Module({ providers: [CohortRepository], exports: [CohortRepository] })
export class CohortsModule {}

import { Module } from '@nestjs/common';
import { DnsChallengeService } from './dns-challenge.service';
import { DomainController } from './domain.controller';
import { DomainRepository } from './domain.repository';
import { DomainService } from './domain.service';

@Module({
  controllers: [DomainController],
  providers: [DomainService, DnsChallengeService, DomainRepository],
})
export class DomainsModule {}

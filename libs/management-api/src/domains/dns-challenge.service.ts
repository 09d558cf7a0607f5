import { Inject, Injectable, Logger } from '@nestjs/common';
import { Resolver } from 'node:dns/promises';
import type { ManagementConfig } from '@hogbase/config';
import { MANAGEMENT_CONFIG } from '../management-config.constants';

export const CHALLENGE_RECORD_PREFIX = '_posthog-challenge';

/** Looks up the TXT record that proves control of a domain, through the configured resolvers. */
@Injectable()
export class DnsChallengeService {
  private readonly logger = new Logger(DnsChallengeService.name);

  constructor(@Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig) {}

  /** Whether `_posthog-challenge.<domain>` has a TXT record equal to the challenge. A failed lookup is a no. */
  async hasChallenge(domain: string, challenge: string): Promise<boolean> {
    const resolver = new Resolver({ timeout: 3000, tries: 2 });
    if (this.config.dnsServers.length > 0) resolver.setServers(this.config.dnsServers);
    try {
      const records = await resolver.resolveTxt(`${CHALLENGE_RECORD_PREFIX}.${domain}`);
      // A TXT value over 255 bytes arrives in chunks; the record is their concatenation.
      return records.some((chunks) => chunks.join('') === challenge);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTFOUND' && code !== 'ENODATA') {
        this.logger.warn({ err: error, domain }, 'TXT lookup failed');
      }
      return false;
    }
  }
}

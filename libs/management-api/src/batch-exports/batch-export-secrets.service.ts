import { Inject, Injectable } from '@nestjs/common';
import { openSecretBox, type ManagementConfig, type SecretBox } from '@hogbase/config';
import { MANAGEMENT_CONFIG } from '../management-config.constants';

/** Opens the SecretBox on first use: otherwise no key file is created under DATA_DIR. */
@Injectable()
export class BatchExportSecrets {
  private box: Promise<SecretBox> | undefined;

  constructor(@Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig) {}

  async seal(config: Record<string, unknown>): Promise<string> {
    return (await this.open()).seal(JSON.stringify(config));
  }

  async unseal(sealed: string): Promise<Record<string, unknown>> {
    return JSON.parse((await this.open()).open(sealed)) as Record<string, unknown>;
  }

  private open(): Promise<SecretBox> {
    this.box ??= openSecretBox(this.config.encryptionKeys, this.config.dataDir).catch((error: unknown) => {
      this.box = undefined;
      throw error;
    });
    return this.box;
  }
}

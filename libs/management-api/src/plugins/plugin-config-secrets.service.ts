import { Inject, Injectable } from '@nestjs/common';
import { openSecretBox, type ManagementConfig, type SecretBox } from '@hogbase/config';
import { MANAGEMENT_CONFIG } from '../management-config.constants';

/**
 * A secret config value as stored in `plugin_configs.config`: SecretBox-sealed JSON of the value.
 * SECURITY: whoever runs the app opens it with `JSON.parse(box.open(sealed))`; the API never does.
 */
export interface SealedValue {
  sealed: string;
}

export function isSealedValue(value: unknown): value is SealedValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>).sealed === 'string' &&
    Object.keys(value).length === 1
  );
}

/** The SecretBox opens on first use, as the batch exports' does. */
@Injectable()
export class PluginConfigSecrets {
  private box: Promise<SecretBox> | undefined;

  constructor(@Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig) {}

  async seal(value: unknown): Promise<SealedValue> {
    return { sealed: (await this.open()).seal(JSON.stringify(value)) };
  }

  private open(): Promise<SecretBox> {
    this.box ??= openSecretBox(this.config.encryptionKeys, this.config.dataDir).catch((error: unknown) => {
      this.box = undefined;
      throw error;
    });
    return this.box;
  }
}

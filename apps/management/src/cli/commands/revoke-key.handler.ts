import { BootstrapService } from '@hogbase/management-api';
import { required } from '../admin-arguments.util';
import type { AdminCommandHandler } from '../admin-context.util';

export const revokeKeyCommand: AdminCommandHandler = async (context, options) => ({
  revoked: await context.get(BootstrapService).revokePersonalApiKey(required(options, 'key')),
});

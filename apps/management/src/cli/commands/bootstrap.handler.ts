import { BootstrapService } from '@hogbase/management-api';
import { required } from '../admin-arguments.util';
import type { AdminCommandHandler } from '../admin-context.util';

/** The user, organization and project (created or reused), and a new personal API key with scope *. */
export const bootstrapCommand: AdminCommandHandler = (context, options) =>
  context.get(BootstrapService).bootstrap({
    email: required(options, 'email'),
    organizationName: options.organization,
    projectName: options.project,
  });

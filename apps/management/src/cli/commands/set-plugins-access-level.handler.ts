import { BootstrapService } from '@hogbase/management-api';
import { required } from '../admin-arguments.util';
import type { AdminCommandHandler } from '../admin-context.util';

/** What the organization may do with pipeline apps: an operator's decision, not its admins'. */
export const setPluginsAccessLevelCommand: AdminCommandHandler = (context, options) =>
  context
    .get(BootstrapService)
    .setPluginsAccessLevel(required(options, 'organization'), required(options, 'level'));

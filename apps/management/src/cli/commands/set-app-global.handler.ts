import { BootstrapService } from '@hogbase/management-api';
import { required } from '../admin-arguments.util';
import type { AdminCommandHandler } from '../admin-context.util';

/** Shows a pipeline app to every organization, or stops (`--global` was checked with the arguments). */
export const setAppGlobalCommand: AdminCommandHandler = (context, options) =>
  context.get(BootstrapService).setAppGlobal(required(options, 'app'), options.global === 'true');

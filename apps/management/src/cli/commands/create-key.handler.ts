import { BootstrapService } from '@hogbase/management-api';
import { list, required } from '../admin-arguments.util';
import type { AdminCommandHandler } from '../admin-context.util';
import { UsageError } from '../admin.errors';

/** A personal API key of the user, with the scopes and organizations or projects given. */
export const createKeyCommand: AdminCommandHandler = async (context, options) => {
  const projects = list(options.projects).map((id) => {
    if (!/^\d+$/.test(id)) throw new UsageError(`--projects: ${id} is not a project id`);
    return Number(id);
  });
  const key = await context.get(BootstrapService).createPersonalApiKey({
    email: required(options, 'email'),
    scopes: list(required(options, 'scopes')),
    label: options.label,
    scopedOrganizations: list(options.organizations),
    scopedTeams: projects,
  });
  return { personal_api_key: key };
};

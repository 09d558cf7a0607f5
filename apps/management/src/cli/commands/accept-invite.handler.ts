import { InviteService } from '@hogbase/management-api';
import { required } from '../admin-arguments.util';
import type { AdminCommandHandler } from '../admin-context.util';

/** Turns an invite into a membership, as the invitee accepting it would. */
export const acceptInviteCommand: AdminCommandHandler = async (context, options) => {
  const { user, membership } = await context
    .get(InviteService)
    .accept(required(options, 'invite'), required(options, 'email'), {
      firstName: options['first-name'],
      lastName: options['last-name'],
    });
  return { user_uuid: user.uuid, organization_id: membership.organizationId, level: membership.level };
};

import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import type { ManagementConfig } from '@hogbase/config';
import type { Organization, OrganizationInvite, User } from '@hogbase/postgres';
import { MANAGEMENT_CONFIG } from '../management-config.constants';
import { INVITE_VALIDITY_DAYS } from './invite.presenter';

/** Sends invite e-mails over SMTP; without `SMTP_URL` it is unavailable and invites are not mailed. */
@Injectable()
export class InviteMailerService implements OnModuleDestroy {
  private readonly logger = new Logger(InviteMailerService.name);
  private readonly transport: Transporter | undefined;

  constructor(@Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig) {
    // Bounded timeouts: the mail is sent within the request, so a silent SMTP server must not stall it.
    this.transport = config.smtp
      ? createTransport({
          url: config.smtp.url,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
        })
      : undefined;
  }

  get available(): boolean {
    return this.transport !== undefined;
  }

  /** Returns whether the server accepted the message; a failure is logged, never thrown at the caller. */
  async send(invite: OrganizationInvite, organization: Organization, inviter: User): Promise<boolean> {
    if (!this.transport || !this.config.smtp) return false;
    const inviterName = [inviter.firstName, inviter.lastName].filter(Boolean).join(' ') || inviter.email;
    const accept = `npm run admin -- accept-invite --invite ${invite.id} --email ${invite.targetEmail}`;
    const lines = [
      `Hi${invite.firstName ? ` ${invite.firstName}` : ''},`,
      '',
      `${inviterName} invited you to join ${organization.name} on ${this.config.siteUrl}.`,
      ...(invite.message ? ['', invite.message] : []),
      '',
      `The invite is valid for ${INVITE_VALIDITY_DAYS} days. An administrator of the instance accepts it for you with:`,
      `  ${accept}`,
      '',
      `Invite id: ${invite.id}`,
    ];
    try {
      await this.transport.sendMail({
        from: this.config.smtp.from,
        to: invite.targetEmail,
        subject: `${inviterName} invited you to join ${organization.name}`,
        text: lines.join('\n'),
      });
      return true;
    } catch (error) {
      this.logger.warn(
        { err: error, inviteId: invite.id },
        'invite e-mail was not accepted by the SMTP server',
      );
      return false;
    }
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }
}

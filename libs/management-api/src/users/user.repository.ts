import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { User } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

export interface NewUser {
  email: string;
  firstName?: string;
  lastName?: string;
  isEmailVerified?: boolean;
}

/** The users table: who a key acts for, and the organization and project `@current` stands for. */
@Injectable()
export class UserRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** E-mails are matched case-insensitively, as PostHog's user lookup does. */
  findByEmail(email: string): Promise<User | null> {
    return this.unitOfWork
      .repository(User)
      .createQueryBuilder('user')
      .where('lower(user.email) = lower(:email)', { email })
      .getOne();
  }

  insert({ email, firstName, lastName, isEmailVerified }: NewUser): Promise<User> {
    const users = this.unitOfWork.repository(User);
    const uuid = uuidv7();
    return users.save(users.create({ uuid, distinctId: uuid, email, firstName, lastName, isEmailVerified }));
  }

  async setCurrentContext(userId: number, organizationId: string, teamId: number | null): Promise<void> {
    await this.unitOfWork
      .repository(User)
      .update({ id: userId }, { currentOrganizationId: organizationId, currentTeamId: teamId });
  }

  async idsWithCurrentOrganization(organizationId: string): Promise<number[]> {
    const users = await this.unitOfWork
      .repository(User)
      .find({ select: { id: true }, where: { currentOrganizationId: organizationId } });
    return users.map((user) => user.id);
  }

  async idsWithCurrentProject(teamId: number): Promise<number[]> {
    const users = await this.unitOfWork
      .repository(User)
      .find({ select: { id: true }, where: { currentTeamId: teamId } });
    return users.map((user) => user.id);
  }

  /** Points each user's current project at the first project of their current organization. */
  async resetCurrentProject(userIds: number[]): Promise<void> {
    await this.unitOfWork.manager.query(
      `UPDATE users SET current_team_id = (
         SELECT t.id FROM teams t WHERE t.organization_id = users.current_organization_id ORDER BY t.id LIMIT 1
       ) WHERE id = ANY($1::int[])`,
      [userIds],
    );
  }

  /**
   * Points each user's current organization and project at their first remaining membership, after
   * they left or lost an organization, as PostHog's `user.leave` (posthog/models/user.py).
   */
  async resetCurrentContext(userIds: number[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.unitOfWork.manager.query(
      `UPDATE users AS u
          SET current_organization_id = first_membership.organization_id,
              current_team_id = (
                SELECT t.id FROM teams t WHERE t.organization_id = first_membership.organization_id ORDER BY t.id LIMIT 1
              )
         FROM users AS target
         LEFT JOIN LATERAL (
                SELECT m.organization_id FROM organization_memberships m
                 WHERE m.user_id = target.id ORDER BY m.joined_at, m.id LIMIT 1
              ) AS first_membership ON true
        WHERE u.id = target.id AND target.id = ANY($1::int[])`,
      [userIds],
    );
  }
}

import type { EntityManager } from 'typeorm';

/**
 * Points each user's "current" organization and project (what `@current` resolves to) at their
 * first remaining membership, after they left or lost an organization, as PostHog's `user.leave`.
 */
export async function resetCurrentContext(manager: EntityManager, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await manager.query(
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

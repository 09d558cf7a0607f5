import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Not } from 'typeorm';
import {
  generateProjectSecretApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
  ProjectSecretApiKey,
  type Team,
} from '@hogbase/postgres';
import type { AccessContext } from '../auth/access-context';
import { SCOPE_OBJECTS } from '../auth/scopes';
import { notFound, validationError } from '../common/api-error';
import type { PageRequest } from '../common/pagination.util';
import type {
  CreateProjectSecretApiKeyDto,
  UpdateProjectSecretApiKeyDto,
} from './project-secret-api-key.dto';
import {
  presentProjectSecretApiKey,
  type ProjectSecretApiKeyResponse,
} from './project-secret-api-key.presenter';

/** The only surface a `phs_` key reaches here: the flag definitions of local evaluation. */
export const PROJECT_SECRET_API_KEY_SCOPES: readonly string[] = ['feature_flag:read'];

export const MAX_PROJECT_SECRET_API_KEYS = 50;

const SCOPE_PATTERN = new RegExp(`^(${SCOPE_OBJECTS.join('|')}):(read|write)$`);

/** PostHog's validate_scopes, with its messages, in its order. */
export function assertAssignableScopes(scopes: readonly string[]): void {
  if (scopes.length === 0) throw validationError('This list may not be empty.', 'scopes', 'min_length');
  for (const scope of scopes) {
    if (scope === '*') {
      throw validationError(
        "Wildcard scope '*' is not allowed for project API keys. Please specify explicit scopes.",
        'scopes',
        'invalid',
      );
    }
    if (!SCOPE_PATTERN.test(scope)) throw validationError(`Invalid scope: ${scope}`, 'scopes', 'invalid');
    if (!PROJECT_SECRET_API_KEY_SCOPES.includes(scope)) {
      throw validationError(
        `Scope '${scope}' can not be assigned to a project secret API key. Allowed scopes: ${PROJECT_SECRET_API_KEY_SCOPES.join(', ')}`,
        'scopes',
        'invalid',
      );
    }
  }
}

const duplicateLabel = (label: string) =>
  validationError(`Project secret API key with label '${label}' already exists.`, 'label', 'invalid');

/** A fresh key and what is stored of it: the SHA-256 and the mask, never the key. */
function newSecret(): { value: string; secureValue: string; maskValue: string } {
  const value = generateProjectSecretApiKey();
  return { value, secureValue: hashPersonalApiKey(value), maskValue: maskApiKey(value) };
}

/**
 * Project secret API keys (`phs_…`): created, renamed, rolled and revoked by project admins. Writes
 * run in one transaction on one connection; capture hears of every change through the table's
 * `hogbase_project_changed` trigger.
 */
@Injectable()
export class ProjectSecretApiKeyService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async list(
    team: Team,
    page: PageRequest,
  ): Promise<{ count: number; results: ProjectSecretApiKeyResponse[] }> {
    const [keys, count] = await this.dataSource.getRepository(ProjectSecretApiKey).findAndCount({
      where: { teamId: team.id },
      relations: { createdBy: true },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { count, results: keys.map((key) => presentProjectSecretApiKey(key)) };
  }

  async retrieve(team: Team, id: string): Promise<ProjectSecretApiKeyResponse> {
    return presentProjectSecretApiKey(await this.find(this.dataSource.manager, team, id));
  }

  async create(
    caller: AccessContext,
    team: Team,
    dto: CreateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    assertAssignableScopes(dto.scopes);
    return this.dataSource.transaction(async (manager) => {
      // Serializes creations in the project, so that two at once cannot both pass the limit.
      await manager.query('SELECT id FROM teams WHERE id = $1 FOR UPDATE', [team.id]);
      const repository = manager.getRepository(ProjectSecretApiKey);
      if (await repository.existsBy({ teamId: team.id, label: dto.label })) throw duplicateLabel(dto.label);
      if ((await repository.countBy({ teamId: team.id })) >= MAX_PROJECT_SECRET_API_KEYS) {
        throw validationError(
          `You can only have ${MAX_PROJECT_SECRET_API_KEYS} project secret API keys. Remove an existing key before creating a new one.`,
        );
      }
      const { value, secureValue, maskValue } = newSecret();
      const id = generateRandomId();
      await repository.insert({
        id,
        teamId: team.id,
        label: dto.label,
        scopes: dto.scopes,
        secureValue,
        maskValue,
        createdById: caller.user.id,
      });
      return presentProjectSecretApiKey(await this.find(manager, team, id), value);
    });
  }

  async update(
    team: Team,
    id: string,
    dto: UpdateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    if (dto.scopes !== undefined) assertAssignableScopes(dto.scopes);
    return this.dataSource.transaction(async (manager) => {
      const key = await this.find(manager, team, id, { lock: true });
      const repository = manager.getRepository(ProjectSecretApiKey);
      if (
        dto.label !== undefined &&
        dto.label !== key.label &&
        (await repository.existsBy({ teamId: team.id, label: dto.label, id: Not(id) }))
      ) {
        throw duplicateLabel(dto.label);
      }
      const changes = {
        ...(dto.label !== undefined ? { label: dto.label } : {}),
        ...(dto.scopes !== undefined ? { scopes: dto.scopes } : {}),
      };
      if (Object.keys(changes).length > 0) await repository.update({ id }, changes);
      return presentProjectSecretApiKey(await this.find(manager, team, id));
    });
  }

  /** A new value; the old one stops working as soon as this commits. */
  async roll(team: Team, id: string): Promise<ProjectSecretApiKeyResponse> {
    return this.dataSource.transaction(async (manager) => {
      await this.find(manager, team, id, { lock: true });
      const { value, secureValue, maskValue } = newSecret();
      await manager
        .getRepository(ProjectSecretApiKey)
        .update({ id }, { secureValue, maskValue, lastRolledAt: new Date() });
      return presentProjectSecretApiKey(await this.find(manager, team, id), value);
    });
  }

  async remove(team: Team, id: string): Promise<void> {
    const result = await this.dataSource.getRepository(ProjectSecretApiKey).delete({ id, teamId: team.id });
    if (!result.affected) throw notFound();
  }

  /** A key of another project answers exactly as one that does not exist. */
  private async find(
    manager: EntityManager,
    team: Team,
    id: string,
    { lock = false }: { lock?: boolean } = {},
  ): Promise<ProjectSecretApiKey> {
    const repository = manager.getRepository(ProjectSecretApiKey);
    if (lock) {
      // FOR UPDATE cannot apply to the nullable side of the created_by join: lock the row alone first.
      const locked = await repository.findOne({
        where: { id, teamId: team.id },
        lock: { mode: 'pessimistic_write' },
      });
      if (!locked) throw notFound();
    }
    const key = await repository.findOne({ where: { id, teamId: team.id }, relations: { createdBy: true } });
    if (!key) throw notFound();
    return key;
  }
}

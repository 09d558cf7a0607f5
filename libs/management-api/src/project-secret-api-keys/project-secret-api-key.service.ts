import { Injectable } from '@nestjs/common';
import {
  generateProjectSecretApiKey,
  generateRandomId,
  hashPersonalApiKey,
  maskApiKey,
  type ProjectSecretApiKey,
  type Team,
} from '@hogbase/postgres';
import type { AccessContext } from '../auth/access.decorator';
import { SCOPE_OBJECTS } from '../auth/scopes.util';
import { notFound, validationError } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import type {
  CreateProjectSecretApiKeyDto,
  UpdateProjectSecretApiKeyDto,
} from './project-secret-api-key.dto';
import {
  presentProjectSecretApiKey,
  type ProjectSecretApiKeyResponse,
} from './project-secret-api-key.presenter';
import { ProjectSecretApiKeyRepository } from './project-secret-api-key.repository';

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
 * run in one transaction; capture hears of every change through the table's
 * `hogbase_project_changed` trigger.
 */
@Injectable()
export class ProjectSecretApiKeyService {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly keys: ProjectSecretApiKeyRepository,
    private readonly projects: ProjectRepository,
  ) {}

  async list(
    team: Team,
    page: PageRequest,
  ): Promise<{ count: number; results: ProjectSecretApiKeyResponse[] }> {
    const [keys, count] = await this.keys.listInProject(team.id, page);
    return { count, results: keys.map((key) => presentProjectSecretApiKey(key)) };
  }

  async retrieve(team: Team, id: string): Promise<ProjectSecretApiKeyResponse> {
    return presentProjectSecretApiKey(await this.find(team, id));
  }

  async create(
    caller: AccessContext,
    team: Team,
    dto: CreateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    assertAssignableScopes(dto.scopes);
    return this.unitOfWork.run(async () => {
      // Serializes creations in the project, so that two at once cannot both pass the limit.
      await this.projects.lock(team.id);
      if (await this.keys.labelTaken(team.id, dto.label)) throw duplicateLabel(dto.label);
      if ((await this.keys.countInProject(team.id)) >= MAX_PROJECT_SECRET_API_KEYS) {
        throw validationError(
          `You can only have ${MAX_PROJECT_SECRET_API_KEYS} project secret API keys. Remove an existing key before creating a new one.`,
        );
      }
      const { value, secureValue, maskValue } = newSecret();
      const id = generateRandomId();
      await this.keys.insert({
        id,
        teamId: team.id,
        label: dto.label,
        scopes: dto.scopes,
        secureValue,
        maskValue,
        createdById: caller.user.id,
      });
      return presentProjectSecretApiKey(await this.find(team, id), value);
    });
  }

  async update(
    team: Team,
    id: string,
    dto: UpdateProjectSecretApiKeyDto,
  ): Promise<ProjectSecretApiKeyResponse> {
    if (dto.scopes !== undefined) assertAssignableScopes(dto.scopes);
    return this.unitOfWork.run(async () => {
      const key = await this.find(team, id, { lock: true });
      if (
        dto.label !== undefined &&
        dto.label !== key.label &&
        (await this.keys.labelTaken(team.id, dto.label, id))
      ) {
        throw duplicateLabel(dto.label);
      }
      const changes = {
        ...(dto.label !== undefined ? { label: dto.label } : {}),
        ...(dto.scopes !== undefined ? { scopes: dto.scopes } : {}),
      };
      if (Object.keys(changes).length > 0) await this.keys.update(id, changes);
      return presentProjectSecretApiKey(await this.find(team, id));
    });
  }

  /** A new value; the old one stops working as soon as this commits. */
  async roll(team: Team, id: string): Promise<ProjectSecretApiKeyResponse> {
    return this.unitOfWork.run(async () => {
      await this.find(team, id, { lock: true });
      const { value, secureValue, maskValue } = newSecret();
      await this.keys.update(id, { secureValue, maskValue, lastRolledAt: new Date() });
      return presentProjectSecretApiKey(await this.find(team, id), value);
    });
  }

  async remove(team: Team, id: string): Promise<void> {
    if (!(await this.keys.deleteInProject(team.id, id))) throw notFound();
  }

  /** A key of another project answers exactly as one that does not exist. */
  private async find(team: Team, id: string, options?: { lock?: boolean }): Promise<ProjectSecretApiKey> {
    const key = await this.keys.findInProject(team.id, id, options);
    if (!key) throw notFound();
    return key;
  }
}

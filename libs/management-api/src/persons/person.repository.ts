import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** A person or a group, as a flag evaluates it. */
export interface FlagSubject {
  id: string;
  distinctId: string;
  properties: Record<string, unknown>;
}

/** Reads of the persons and groups that ingestion writes; the API never writes them. */
@Injectable()
export class PersonRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The next `limit` persons of the project after id `after`, each with one of its distinct ids. */
  personsAfter(teamId: number, after: string, limit: number): Promise<FlagSubject[]> {
    return this.unitOfWork.manager.query(
      `SELECT p.id::text AS id, p.properties,
              (SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id
                ORDER BY d.distinct_id LIMIT 1) AS "distinctId"
         FROM persons p WHERE p.team_id = $1 AND p.id > $2 ORDER BY p.id LIMIT $3`,
      [teamId, after, limit],
    );
  }

  /** The next `limit` groups of a type after id `after`, keyed by their group key. */
  groupsAfter(teamId: number, groupTypeIndex: number, after: string, limit: number): Promise<FlagSubject[]> {
    return this.unitOfWork.manager.query(
      `SELECT g.id::text AS id, g.group_properties AS properties, g.group_key AS "distinctId"
         FROM groups g WHERE g.team_id = $1 AND g.group_type_index = $2 AND g.id > $3
        ORDER BY g.id LIMIT $4`,
      [teamId, groupTypeIndex, after, limit],
    );
  }
}

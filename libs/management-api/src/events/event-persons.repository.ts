import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/iso.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { parseJsonObject, type EventPerson } from './event.presenter';

/** Shown per person: a person merged many times can hold thousands of distinct ids. */
export const MAX_PERSON_DISTINCT_IDS = 100;

interface PersonRow {
  distinct_id: string;
  is_identified: boolean;
  properties: Record<string, unknown> | string;
  distinct_ids: string[];
}

/** The persons behind events, read from Postgres (the system of record), always within one project. */
@Injectable()
export class EventPersonsRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The current person of each distinct id that has one, in one query. */
  async personsByDistinctId(
    teamId: number,
    distinctIds: readonly string[],
  ): Promise<Map<string, EventPerson>> {
    const persons = new Map<string, EventPerson>();
    if (distinctIds.length === 0) return persons;
    const rows = await this.unitOfWork.manager.query<PersonRow[]>(
      `SELECT pdi.distinct_id, p.is_identified, p.properties,
              ARRAY(SELECT d.distinct_id FROM person_distinct_ids d
                    WHERE d.person_id = p.id ORDER BY d.distinct_id LIMIT $3) AS distinct_ids
         FROM person_distinct_ids pdi
         JOIN persons p ON p.id = pdi.person_id AND p.team_id = pdi.team_id
        WHERE pdi.team_id = $1 AND pdi.distinct_id = ANY($2::text[])`,
      [teamId, [...new Set(distinctIds)], MAX_PERSON_DISTINCT_IDS],
    );
    for (const row of rows) {
      persons.set(row.distinct_id, {
        is_identified: row.is_identified,
        distinct_ids: row.distinct_ids,
        properties: typeof row.properties === 'string' ? parseJsonObject(row.properties) : row.properties,
      });
    }
    return persons;
  }

  /**
   * Every distinct id of the person `personId` names (its numeric id or its UUID), or undefined
   * when the project has no such person.
   */
  async distinctIdsOfPerson(teamId: number, personId: string): Promise<string[] | undefined> {
    let condition: string;
    if (/^\d{1,18}$/.test(personId)) condition = 'p.id = $2::bigint';
    else if (isUuid(personId)) condition = 'p.uuid = $2::uuid';
    else return undefined;
    const rows = await this.unitOfWork.manager.query<{ found: boolean; distinct_ids: string[] }[]>(
      `SELECT true AS found,
              ARRAY(SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id) AS distinct_ids
         FROM persons p
        WHERE p.team_id = $1 AND ${condition}`,
      [teamId, personId],
    );
    return rows[0]?.distinct_ids;
  }
}

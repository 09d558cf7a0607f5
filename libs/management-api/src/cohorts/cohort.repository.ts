import { Injectable } from '@nestjs/common';
import { In, type DeepPartial } from 'typeorm';
import { Cohort } from '@hogbase/postgres';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** Rows written per statement when a static cohort is filled. */
const MEMBER_BATCH = 5_000;

@Injectable()
export class CohortRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The project's live cohorts among `ids`. */
  findLive(teamId: number, ids: number[]): Promise<Cohort[]> {
    return this.unitOfWork.repository(Cohort).findBy({ id: In(ids), teamId, deleted: false });
  }

  findOneLive(teamId: number, id: number): Promise<Cohort | null> {
    return this.unitOfWork.repository(Cohort).findOneBy({ id, teamId, deleted: false });
  }

  insert(cohort: DeepPartial<Cohort>): Promise<Cohort> {
    const repository = this.unitOfWork.repository(Cohort);
    return repository.save(repository.create(cohort));
  }

  /** Adds persons (by id) to a static cohort. */
  async addPersons(cohortId: number, personIds: readonly string[]): Promise<void> {
    for (let start = 0; start < personIds.length; start += MEMBER_BATCH) {
      await this.unitOfWork.manager.query(
        `INSERT INTO cohort_people (cohort_id, person_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`,
        [cohortId, personIds.slice(start, start + MEMBER_BATCH)],
      );
    }
  }

  /** The static cohorts each of these persons is in. */
  async staticMemberships(personIds: readonly string[]): Promise<Map<string, Set<number>>> {
    const rows: { person_id: string; cohort_id: number }[] = await this.unitOfWork.manager.query(
      `SELECT person_id::text, cohort_id FROM cohort_people WHERE person_id = ANY($1::bigint[])`,
      [personIds],
    );
    const memberships = new Map<string, Set<number>>();
    for (const row of rows) {
      const set = memberships.get(row.person_id) ?? new Set<number>();
      set.add(row.cohort_id);
      memberships.set(row.person_id, set);
    }
    return memberships;
  }
}

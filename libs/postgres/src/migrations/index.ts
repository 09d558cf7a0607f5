import { CreateManagementCore1763790000000 } from './1763790000000-CreateManagementCore';

/** Every migration, in order. A landed migration is never edited: add a new one. */
export const MIGRATIONS = [CreateManagementCore1763790000000];

export { FlagStore, pgSqlClient, type EvaluationSubject, type TeamFlags } from './flag.store';

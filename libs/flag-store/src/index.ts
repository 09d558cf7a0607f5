export { FlagStore, pgSqlClient, type EvaluationSubject, type SqlClient, type TeamFlags } from './flag.store';

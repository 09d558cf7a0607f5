// The only names spliced into SQL (identifiers cannot be bound): they come from config or test
// helpers, never from a request, and are checked here first.
const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const CLUSTER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function isValidDatabaseName(name: string): boolean {
  return DATABASE_NAME.test(name);
}

export function isValidClusterName(name: string): boolean {
  return CLUSTER_NAME.test(name);
}

export function assertDatabaseName(name: string): string {
  if (!isValidDatabaseName(name)) {
    throw new Error(
      `Invalid ClickHouse database name ${JSON.stringify(name)}: use letters, digits and underscores, not starting with a digit`,
    );
  }
  return name;
}

export function assertClusterName(name: string): string {
  if (!isValidClusterName(name)) {
    throw new Error(
      `Invalid ClickHouse cluster name ${JSON.stringify(name)}: use letters, digits, '_', '.' and '-'`,
    );
  }
  return name;
}

/** A command line the CLI cannot run: printed with the usage. */
export class UsageError extends Error {}

/** A failure the operator can act on from its message alone: printed without a stack. */
export class AdminError extends Error {}

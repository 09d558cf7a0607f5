/** Lets callers tell app faults from host bugs. */
export class SandboxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The sandbox is broken afterwards and must be recreated. */
export class SandboxTimeoutError extends SandboxError {}

/** The sandbox is broken afterwards and must be recreated. */
export class SandboxMemoryError extends SandboxError {}

/** The sandbox stays usable. */
export class SandboxAppError extends SandboxError {
  constructor(
    message: string,
    /** Undefined when a non-Error was thrown. */
    readonly appErrorName: string | undefined,
    readonly appStack: string | undefined,
  ) {
    super(message);
  }
}

/** No room in the pool's memory budget, or evicted for room: its owner loads it again at its next call. */
export class SandboxBudgetError extends SandboxError {}

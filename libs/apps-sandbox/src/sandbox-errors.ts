/** Base of every error the sandbox rejects a call with, so callers can tell app faults from host bugs. */
export class SandboxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The app ran past its time limit. The sandbox is broken afterwards and must be recreated. */
export class SandboxTimeoutError extends SandboxError {}

/** The app ran out of its memory limit. The sandbox is broken afterwards and must be recreated. */
export class SandboxMemoryError extends SandboxError {}

/** The app threw (or rejected). The sandbox stays usable. */
export class SandboxAppError extends SandboxError {
  constructor(
    message: string,
    /** The guest error's `name` (`TypeError`, ...), or undefined when a non-Error was thrown. */
    readonly appErrorName: string | undefined,
    /** The guest's stack as QuickJS prints it, when there is one. */
    readonly appStack: string | undefined,
  ) {
    super(message);
  }
}

/**
 * No room for another sandbox in the memory budget of all sandboxes (every one in a call), or the
 * sandbox was unloaded to make room for another: its owner loads it again at its next call.
 */
export class SandboxBudgetError extends SandboxError {}

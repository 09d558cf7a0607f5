/** True once `work` settles, false once `ms` passed first; the work itself goes on. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** False as soon as one of the signals aborts. */
export function sleep(ms: number, ...signals: AbortSignal[]): Promise<boolean> {
  if (signals.some((signal) => signal.aborted)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
      resolve(false);
    };
    const timer = setTimeout(
      () => {
        for (const signal of signals) signal.removeEventListener('abort', onAbort);
        resolve(true);
      },
      Math.max(0, ms),
    );
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `attempt` is 1-based. */
export function backoffMs(attempt: number, initialMs: number, maxMs: number): number {
  return Math.min(initialMs * 2 ** Math.min(attempt - 1, 30), maxMs);
}

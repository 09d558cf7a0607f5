/**
 * Ports this process listens on, reported once bound (port 0 is only known then); process-wide so
 * every policy refuses them. A worker thread has its own copy.
 */
const listening = new Map<number, number>();

/** The returned function removes it again: a stopped server frees its port for others. */
export function registerOwnPort(port: number): () => void {
  listening.set(port, (listening.get(port) ?? 0) + 1);
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    const count = (listening.get(port) ?? 1) - 1;
    if (count > 0) listening.set(port, count);
    else listening.delete(port);
  };
}

export function isRegisteredOwnPort(port: number): boolean {
  return listening.has(port);
}

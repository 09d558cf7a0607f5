/**
 * The TCP ports this process listens on, as its services report them once bound (a port 0 in the
 * config is only known then). Process-wide on purpose: every egress policy of the process refuses
 * them on the machine's own addresses. A worker thread has its own copy: what runs there relies on
 * the ports its config names (`EgressPolicyOptions.ownPorts`).
 */
const listening = new Map<number, number>();

/** Adds a port; the returned function removes it again (a stopped server frees its port for others). */
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

// Property names come from users: "__proto__" or "toString" are ordinary keys to them, but plain
// `object[key]` reads inherited members and assigning "__proto__" replaces the prototype: use these.

export function ownValue(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export function setOwn<T>(object: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/** `Object.assign` without the "__proto__" trap. */
export function assignOwn(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) setOwn(target, key, value);
}

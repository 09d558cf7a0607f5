/**
 * The string PostHog's flags service compares: a string as is, anything else as compact JSON
 * (`serde_json::to_string`), so `5` matches `"5"` and `[1,2]` is `"[1,2]"`.
 */
export function stringRepresentation(value: unknown): string {
  return typeof value === 'string' ? value : serializeJson(value);
}

/**
 * As serde_json writes it: no spaces, keys in code point order (a BTreeMap), integers as integers,
 * other numbers in Rust's float form (a parsed `5.0` is the number 5 here, so never `5.0`).
 */
export function serializeJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return formatJsonNumber(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map((item) => serializeJson(item)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([left], [right]) => compareCodePoints(left, right));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${serializeJson(item)}`).join(',')}}`;
  }
  return 'null';
}

/** serde_json writes non-finite floats as null. */
export function formatJsonNumber(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  // JSON integers parse to serde's i64/u64 and print as plain digits.
  if (Number.isInteger(value) && Math.abs(value) < 2 ** 64) {
    return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
  }
  return formatRustFloat(value);
}

/**
 * Rust's `ryu` layout: plain while the point sits from 4 left of the first digit to 16 right of it,
 * else scientific (`1.5e-7`); JavaScript's cut-offs differ, so only its digits are used.
 */
export function formatRustFloat(value: number): string {
  const sign = value < 0 ? '-' : '';
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  const point = exponent + 1;
  if (point > 0 && point <= 16) {
    if (digits.length <= point) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
    return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  }
  if (point > -5 && point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
  return `${sign}${digits[0]}${fraction}e${exponent}`;
}

function compareCodePoints(left: string, right: string): number {
  const leftPoints = Array.from(left);
  const rightPoints = Array.from(right);
  const length = Math.min(leftPoints.length, rightPoints.length);
  for (let index = 0; index < length; index++) {
    const difference = leftPoints[index].codePointAt(0)! - rightPoints[index].codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return leftPoints.length - rightPoints.length;
}

/** Rust's `str::parse::<f64>` (`inf`/`nan` in any case, no whitespace); undefined when not a float. */
export function parseRustFloat(text: string): number | undefined {
  const match = /^([+-]?)(?:(inf|infinity|nan)|(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))$/i.exec(
    text,
  );
  if (!match) return undefined;
  const negative = match[1] === '-';
  if (match[2] !== undefined) {
    if (match[2].toLowerCase() === 'nan') return Number.NaN;
    return negative ? -Infinity : Infinity;
  }
  const parsed = Number(match[3]);
  return negative ? -parsed : parsed;
}

/** serde_json's `Value::as_f64` path of the flags service: a number, else its text parsed. */
export function toFloat(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return parseRustFloat(stringRepresentation(value));
}

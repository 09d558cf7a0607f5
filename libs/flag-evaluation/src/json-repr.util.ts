/**
 * How PostHog's flags service turns a JSON value into the string it compares: a string as is,
 * anything else as compact JSON (`serde_json::to_string`). Numbers, arrays and objects therefore
 * compare by their JSON text: `5` matches `"5"`, `[1,2]` is `"[1,2]"`.
 */
export function stringRepresentation(value: unknown): string {
  return typeof value === 'string' ? value : serializeJson(value);
}

/**
 * Compact JSON as serde_json writes it: no spaces, object keys in code point order (its map is a
 * BTreeMap), integers as integers and other numbers in Rust's shortest float form (`1.5`,
 * `1e-7`, `1.0` for an integral float is unknowable here: a parsed `5.0` is the number 5).
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
 * Rust's `ryu` layout of a float's shortest digits: plain notation while the decimal point sits
 * between 4 places left of the first digit and 16 right of it, scientific (`1.5e-7`, `1e30`)
 * outside. JavaScript's own cut-offs differ (`1e-7` vs `0.0000015`), so only its digits are used.
 */
export function formatRustFloat(value: number): string {
  const sign = value < 0 ? '-' : '';
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  // Position of the decimal point relative to the start of the digits.
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

/**
 * Rust's `str::parse::<f64>`: optional sign, digits with an optional point and exponent, or
 * `inf`/`infinity`/`nan` in any case; no surrounding whitespace. Undefined when it is not one.
 */
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

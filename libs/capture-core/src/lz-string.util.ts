/**
 * `LZString.decompressFromBase64` (lz-string 1.5, old posthog-js's `compression=lz64`), ported.
 * TRICKY: a few MB can expand to terabytes and the package cannot stop early; this stops past
 * `maxLength`.
 */

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
/** Character code -> 6-bit value; anything outside the alphabet reads as 0, as in the package. */
const BASE64_VALUES = new Uint8Array(128);
for (let index = 0; index < BASE64_ALPHABET.length; index++) {
  BASE64_VALUES[BASE64_ALPHABET.charCodeAt(index)] = index;
}

const RESET_VALUE = 32;

export class LzStringOutputTooLongError extends Error {
  constructor(readonly maxLength: number) {
    super(`lz-string output longer than ${maxLength} characters`);
    this.name = 'LzStringOutputTooLongError';
  }
}

/** Null when the input is empty or not valid lz-string (where the package answers null or ""). */
export function decompressLzStringBase64(input: string, maxLength: number): string | null {
  const length = input.length;
  if (length === 0) return null;

  const valueAt = (index: number): number => {
    if (index >= length) return 0;
    const code = input.charCodeAt(index);
    return code < 128 ? (BASE64_VALUES[code] ?? 0) : 0;
  };

  let value = valueAt(0);
  let position = RESET_VALUE;
  let index = 1;

  const readBits = (count: number): number => {
    let bits = 0;
    let power = 1;
    for (let bit = 0; bit < count; bit++) {
      const set = value & position;
      position >>= 1;
      if (position === 0) {
        position = RESET_VALUE;
        value = valueAt(index++);
      }
      if (set > 0) bits += power;
      power *= 2;
    }
    return bits;
  };

  // Entries 0-2 are the three control codes; literals and phrases start at 3.
  const dictionary: string[] = ['', '', ''];
  let enlargeIn = 4;
  let numBits = 3;
  const parts: string[] = [];
  let outputLength = 0;

  let first: string;
  switch (readBits(2)) {
    case 0:
      first = String.fromCharCode(readBits(8));
      break;
    case 1:
      first = String.fromCharCode(readBits(16));
      break;
    default:
      return null;
  }
  dictionary.push(first);
  let previous = first;
  parts.push(first);
  outputLength = 1;

  for (;;) {
    if (index > length) return null;
    let code = readBits(numBits);
    switch (code) {
      case 0:
      case 1:
        dictionary.push(String.fromCharCode(readBits(code === 0 ? 8 : 16)));
        code = dictionary.length - 1;
        enlargeIn--;
        break;
      case 2:
        return parts.join('');
      default:
        break;
    }
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits;
      numBits++;
    }

    let entry: string;
    if (code < dictionary.length) {
      entry = dictionary[code] ?? '';
    } else if (code === dictionary.length) {
      entry = previous + previous.charAt(0);
    } else {
      return null;
    }
    outputLength += entry.length;
    if (outputLength > maxLength) throw new LzStringOutputTooLongError(maxLength);
    parts.push(entry);

    dictionary.push(previous + entry.charAt(0));
    enlargeIn--;
    previous = entry;

    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits;
      numBits++;
    }
  }
}

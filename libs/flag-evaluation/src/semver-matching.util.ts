/** `semver_*` as PostHog's flags service reads versions with the Rust `semver` crate (README). */

export interface SemVersion {
  major: number;
  minor: number;
  patch: number;
  pre: string[];
  build: string[];
}

type Comparator = {
  op: '=' | '>' | '>=' | '<' | '<=' | '~' | '^' | '*';
  major: number;
  minor?: number;
  patch?: number;
  pre: string[];
};

const NUMERIC = /^(0|[1-9]\d*)$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;

export function toSemver(text: string): SemVersion | undefined {
  return parseVersion(canonicalizeVersion(normalizeVersion(text)));
}

export function normalizeVersion(text: string): string {
  return (text.startsWith('v') ? text.slice(1) : text).trim();
}

/** Pads the numeric core to three parts and strips leading zeros; the suffix is kept as is. */
export function canonicalizeVersion(version: string): string {
  const suffixAt = version.search(/[-+]/);
  const core = suffixAt === -1 ? version : version.slice(0, suffixAt);
  const suffix = suffixAt === -1 ? '' : version.slice(suffixAt);
  const components = core.split('.').map(stripLeadingZeros);
  while (components.length < 3) components.push('0');
  return `${components.join('.')}${suffix}`;
}

export function stripLeadingZeros(part: string): string {
  if (part === '' || !/^\d+$/.test(part)) return part;
  const trimmed = part.replace(/^0+/, '');
  return trimmed === '' ? '0' : trimmed;
}

/** Strict SemVer 2.0: `MAJOR.MINOR.PATCH[-pre][+build]`. */
export function parseVersion(text: string): SemVersion | undefined {
  const match = /^([^-+]*)(?:-([^+]*))?(?:\+(.*))?$/.exec(text);
  if (!match) return undefined;
  const core = match[1].split('.');
  if (core.length !== 3 || !core.every((part) => NUMERIC.test(part))) return undefined;
  const [major, minor, patch] = core.map(Number);
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  const pre = parseIdentifiers(match[2], true);
  const build = parseIdentifiers(match[3], false);
  if (pre === undefined || build === undefined) return undefined;
  return { major, minor, patch, pre, build };
}

function parseIdentifiers(text: string | undefined, isPrerelease: boolean): string[] | undefined {
  if (text === undefined) return [];
  const identifiers = text.split('.');
  for (const identifier of identifiers) {
    if (!IDENTIFIER.test(identifier)) return undefined;
    if (isPrerelease && /^\d+$/.test(identifier) && !NUMERIC.test(identifier)) return undefined;
  }
  return identifiers;
}

/** Total order of the `semver` crate: core, then pre-release (none is highest), then build. */
export function compareVersions(left: SemVersion, right: SemVersion): number {
  return (
    compareNumbers(left.major, right.major) ||
    compareNumbers(left.minor, right.minor) ||
    compareNumbers(left.patch, right.patch) ||
    comparePrerelease(left.pre, right.pre) ||
    compareBuild(left.build, right.build)
  );
}

export function versionsEqual(left: SemVersion, right: SemVersion): boolean {
  return compareVersions(left, right) === 0 && left.build.join('.') === right.build.join('.');
}

function compareNumbers(left: number, right: number): number {
  return left === right ? 0 : left < right ? -1 : 1;
}

export function comparePrerelease(left: string[], right: string[]): number {
  if (left.length === 0 || right.length === 0) return compareNumbers(right.length, left.length);
  return compareIdentifierLists(left, right);
}

function compareBuild(left: string[], right: string[]): number {
  return compareIdentifierLists(left, right);
}

function compareIdentifierLists(left: string[], right: string[]): number {
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const order = compareIdentifiers(left[index], right[index]);
    if (order !== 0) return order;
  }
  return compareNumbers(left.length, right.length);
}

function compareIdentifiers(left: string, right: string): number {
  const leftNumeric = /^\d+$/.test(left);
  const rightNumeric = /^\d+$/.test(right);
  if (leftNumeric && rightNumeric) {
    const leftValue = stripLeadingZeros(left);
    const rightValue = stripLeadingZeros(right);
    return (
      compareNumbers(leftValue.length, rightValue.length) ||
      (leftValue < rightValue ? -1 : leftValue > rightValue ? 1 : 0) ||
      compareNumbers(left.length, right.length)
    );
  }
  if (leftNumeric) return -1;
  if (rightNumeric) return 1;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** A `semver::VersionReq` (comma-separated, a bare version means caret); undefined when not one. */
export function parseVersionRequirement(text: string): Comparator[] | undefined {
  const trimmed = text.trim();
  if (trimmed === '*' || trimmed === 'x' || trimmed === 'X') return [];
  const comparators: Comparator[] = [];
  for (const part of trimmed.split(',')) {
    const comparator = parseComparator(part.trim());
    if (comparator === undefined) return undefined;
    if (comparator !== 'star') comparators.push(comparator);
  }
  return comparators;
}

function parseComparator(text: string): Comparator | 'star' | undefined {
  const match = /^(=|>=|<=|>|<|~|\^)?\s*([^-+\s]*)(?:-([^+\s]*))?(?:\+(\S*))?$/.exec(text);
  if (!match) return undefined;
  const op = (match[1] ?? '^') as Comparator['op'];
  const parts = match[2].split('.');
  if (parts.length > 3) return undefined;
  const numbers: Array<number | undefined> = [];
  let sawWildcard = false;
  for (const part of parts) {
    if (part === '*' || part === 'x' || part === 'X') {
      sawWildcard = true;
      numbers.push(undefined);
      continue;
    }
    if (sawWildcard || !NUMERIC.test(part)) return undefined;
    const value = Number(part);
    if (!Number.isSafeInteger(value)) return undefined;
    numbers.push(value);
  }
  const pre = parseIdentifiers(match[3], true);
  if (pre === undefined || parseIdentifiers(match[4], false) === undefined) return undefined;
  const [major, minor, patch] = numbers;
  if (major === undefined) return match[1] === undefined || match[1] === '=' ? 'star' : undefined;
  if (pre.length > 0 && patch === undefined) return undefined;
  return { op: sawWildcard && match[1] === undefined ? '*' : op, major, minor, patch, pre };
}

/** `VersionReq::matches`: every comparator holds, and a pre-release needs a matching bound. */
export function requirementMatches(comparators: Comparator[], version: SemVersion): boolean {
  if (!comparators.every((comparator) => comparatorMatches(comparator, version))) return false;
  if (version.pre.length === 0) return true;
  return comparators.some(
    (comparator) =>
      comparator.major === version.major &&
      comparator.minor === version.minor &&
      comparator.patch === version.patch &&
      comparator.pre.length > 0,
  );
}

function comparatorMatches(comparator: Comparator, version: SemVersion): boolean {
  switch (comparator.op) {
    case '=':
    case '*':
      return matchesExact(comparator, version);
    case '>':
      return matchesGreater(comparator, version);
    case '>=':
      return matchesExact(comparator, version) || matchesGreater(comparator, version);
    case '<':
      return matchesLess(comparator, version);
    case '<=':
      return matchesExact(comparator, version) || matchesLess(comparator, version);
    case '~':
      return matchesTilde(comparator, version);
    case '^':
      return matchesCaret(comparator, version);
  }
}

function matchesExact(comparator: Comparator, version: SemVersion): boolean {
  if (version.major !== comparator.major) return false;
  if (comparator.minor !== undefined && version.minor !== comparator.minor) return false;
  if (comparator.patch !== undefined && version.patch !== comparator.patch) return false;
  return comparePrerelease(version.pre, comparator.pre) === 0;
}

function matchesGreater(comparator: Comparator, version: SemVersion): boolean {
  if (version.major !== comparator.major) return version.major > comparator.major;
  if (comparator.minor === undefined) return false;
  if (version.minor !== comparator.minor) return version.minor > comparator.minor;
  if (comparator.patch === undefined) return false;
  if (version.patch !== comparator.patch) return version.patch > comparator.patch;
  return comparePrerelease(version.pre, comparator.pre) > 0;
}

function matchesLess(comparator: Comparator, version: SemVersion): boolean {
  if (version.major !== comparator.major) return version.major < comparator.major;
  if (comparator.minor === undefined) return false;
  if (version.minor !== comparator.minor) return version.minor < comparator.minor;
  if (comparator.patch === undefined) return false;
  if (version.patch !== comparator.patch) return version.patch < comparator.patch;
  return comparePrerelease(version.pre, comparator.pre) < 0;
}

function matchesTilde(comparator: Comparator, version: SemVersion): boolean {
  if (version.major !== comparator.major) return false;
  if (comparator.minor !== undefined && version.minor !== comparator.minor) return false;
  if (comparator.patch !== undefined && version.patch !== comparator.patch)
    return version.patch > comparator.patch;
  return comparePrerelease(version.pre, comparator.pre) >= 0;
}

function matchesCaret(comparator: Comparator, version: SemVersion): boolean {
  if (version.major !== comparator.major) return false;
  if (comparator.minor === undefined) return true;
  if (comparator.patch === undefined) {
    return comparator.major > 0 ? version.minor >= comparator.minor : version.minor === comparator.minor;
  }
  if (comparator.major > 0) {
    if (version.minor !== comparator.minor) return version.minor > comparator.minor;
    if (version.patch !== comparator.patch) return version.patch > comparator.patch;
  } else if (comparator.minor > 0) {
    if (version.minor !== comparator.minor) return false;
    if (version.patch !== comparator.patch) return version.patch > comparator.patch;
  } else if (version.minor !== comparator.minor || version.patch !== comparator.patch) {
    return false;
  }
  return comparePrerelease(version.pre, comparator.pre) >= 0;
}

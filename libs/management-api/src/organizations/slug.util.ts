import { randomInt } from 'node:crypto';

export const MAX_SLUG_LENGTH = 48;

/** Django's slugify: ASCII letters, digits, `_` and `-`, lowercase, whitespace runs become `-`. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[^\x00-\x7F]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}

/** Candidates in PostHog's order: the plain slug, then the slug with a random 4-letter suffix. */
export function slugCandidates(name: string, attempts = 10): string[] {
  const base = slugify(name) || 'organization';
  const candidates = [base.slice(0, MAX_SLUG_LENGTH)];
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  while (candidates.length < attempts) {
    const suffix = Array.from({ length: 4 }, () => letters[randomInt(letters.length)]).join('');
    candidates.push(`${base.slice(0, MAX_SLUG_LENGTH - 5)}-${suffix}`);
  }
  return candidates;
}

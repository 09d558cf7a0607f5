import { MAX_SLUG_LENGTH, slugCandidates, slugify } from './slug.util';

describe('slugify', () => {
  it.each([
    ['Acme Inc.', 'acme-inc'],
    ['  Hello   World  ', 'hello-world'],
    ['Café Crème', 'cafe-creme'],
    ['--alpha--', 'alpha'],
    ['🦔', ''],
  ])('turns %j into %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });
});

describe('slugCandidates', () => {
  it('tries the plain slug first, then suffixed ones within the length limit', () => {
    const candidates = slugCandidates('A'.repeat(80));
    expect(candidates).toHaveLength(10);
    expect(candidates[0]).toBe('a'.repeat(MAX_SLUG_LENGTH));
    for (const candidate of candidates.slice(1)) {
      expect(candidate).toMatch(new RegExp(`^a{${MAX_SLUG_LENGTH - 5}}-[a-z]{4}$`));
    }
  });

  it('falls back to a generic slug for a name without ASCII letters', () => {
    expect(slugCandidates('🦔')[0]).toBe('organization');
  });
});

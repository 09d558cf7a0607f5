import { isValidScope, scopesGrant } from './scopes.util';

describe('scopesGrant', () => {
  it('grants everything to a legacy key without scopes and to *', () => {
    expect(scopesGrant(null, 'organization:write')).toBe(true);
    expect(scopesGrant([], 'organization:write')).toBe(true);
    expect(scopesGrant(['*'], 'feature_flag:write')).toBe(true);
  });

  it('lets write imply read, never read imply write', () => {
    expect(scopesGrant(['organization:write'], 'organization:read')).toBe(true);
    expect(scopesGrant(['organization:read'], 'organization:write')).toBe(false);
  });

  it('does not let one object stand for another', () => {
    expect(scopesGrant(['organization:write'], 'organization_member:read')).toBe(false);
    expect(scopesGrant(['organization_member:write'], 'organization:read')).toBe(false);
  });
});

describe('isValidScope', () => {
  it.each(['*', 'organization:read', 'query:read', 'feature_flag:write'])('accepts %s', (scope) => {
    expect(isValidScope(scope)).toBe(true);
  });

  it.each(['', 'organization', 'organization:admin', 'nothing:read', '*:read', 'organization:read '])(
    'refuses %j',
    (scope) => {
      expect(isValidScope(scope)).toBe(false);
    },
  );
});

import { ApiError } from '../common/api.error';
import { checkFeatureFlagFilters } from './feature-flag-filters.validator';

function regexFilters(value: string, operator = 'regex'): Record<string, unknown> {
  return { groups: [{ properties: [{ key: 'email', type: 'person', operator, value }] }] };
}

function refusal(filters: Record<string, unknown>): ApiError {
  try {
    checkFeatureFlagFilters(filters);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('the filters were accepted');
}

const RE2_HINT = '(flags use RE2 syntax, which has no backreferences or lookaround)';

describe('checkFeatureFlagFilters: regex values', () => {
  it.each(['(a|a)*$', '(a|aa)+$', '(a|b|ab)*c', `${'[\\s\\S]*'.repeat(12)}!`, '^(a+)+$', '(?i)^ann@', ''])(
    'accepts %s, which RE2 matches in linear time',
    (pattern) => {
      expect(checkFeatureFlagFilters(regexFilters(pattern)).filters).toEqual(regexFilters(pattern));
    },
  );

  it.each([
    ['regex', '^(a+)\\1+$', `invalid escape sequence: \`\\1\` ${RE2_HINT}`],
    ['not_regex', '^(a+)\\1+$', `invalid escape sequence: \`\\1\` ${RE2_HINT}`],
    ['regex', 'foo(?=bar)', `invalid or unsupported Perl syntax: \`(?=\` ${RE2_HINT}`],
    ['regex', '(?<!x)y', `invalid named capture: \`(?<!x)y\` ${RE2_HINT}`],
    ['regex', '(', 'missing closing ): `(`'],
  ])('refuses a %s value RE2 cannot compile: %s', (operator, pattern, reason) => {
    const error = refusal(regexFilters(pattern, operator));
    expect(error).toMatchObject({
      status: 400,
      type: 'validation_error',
      code: 'invalid_value',
      attr: 'filters',
      detail: `Invalid value for operator ${operator}: ${pattern} is not a regular expression flags can evaluate: ${reason}`,
    });
  });

  it('refuses a pattern too large to evaluate', () => {
    const pattern = 'a{1000}b{1000}c{1000}d{1000}e{1000}';
    expect(refusal(regexFilters(pattern)).detail).toMatch(
      /^Invalid value for operator regex: a\{1000\}.* is not a regular expression flags can evaluate: it compiles to \d+ instructions, more than the 5000 allowed$/,
    );
  });

  it('checks regexes in super groups, holdout groups and group-based flags too', () => {
    const property = { key: 'email', type: 'person', operator: 'regex', value: '(?=a)' };
    expect(refusal({ groups: [], super_groups: [{ properties: [property] }] }).code).toBe('invalid_value');
    expect(refusal({ groups: [], holdout_groups: [{ properties: [property] }] }).code).toBe('invalid_value');
    const groupProperty = { ...property, type: 'group', group_type_index: 0 };
    expect(refusal({ aggregation_group_type_index: 0, groups: [{ properties: [groupProperty] }] }).code).toBe(
      'invalid_value',
    );
  });
});

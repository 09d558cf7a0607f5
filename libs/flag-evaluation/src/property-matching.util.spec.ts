import type { FlagProperty } from './flag-definition.types';
import { matchProperty } from './property-matching.util';

/**
 * Expected values come from PostHog's flags service tests,
 * PostHog/posthog rust/feature-flags/src/properties/property_matching.rs (`mod test_match_properties`,
 * test names given per block), evaluated there with complete properties unless noted. The service
 * is what answers `/flags`; where posthog-node's local evaluation would give up instead, that is
 * said next to the case.
 */

const options = { timezone: 'UTC', now: new Date('2026-03-15T12:00:00Z') };

function matches(filter: Partial<FlagProperty>, properties: Record<string, unknown>): boolean {
  return matchProperty({ key: 'key', type: 'person', ...filter }, properties, options);
}

describe('matchProperty', () => {
  describe('exact', () => {
    // test_match_properties_exact_with_partial_props
    it.each([
      ['value', true],
      ['value2', false],
      ['', false],
      [null, false],
    ])('matches "value" against %p as %p', (actual, expected) => {
      expect(matches({ value: 'value' }, { key: actual })).toBe(expected);
      expect(matches({ value: 'value', operator: 'exact' }, { key: actual })).toBe(expected);
    });

    it('matches any item of a list value', () => {
      const filter = { operator: 'exact', value: ['value1', 'value2', 'value3'] };
      expect(matches(filter, { key: 'value1' })).toBe(true);
      expect(matches(filter, { key: 'value3' })).toBe(true);
      expect(matches(filter, { key: 'value4' })).toBe(false);
    });

    // test_match_properties_exact_array_is_case_insensitive
    it.each([
      ['us', true],
      ['Us', true],
      ['US', true],
      ['ca', true],
      ['uk', true],
      ['UK', true],
      ['de', false],
    ])('compares list items case-insensitively: %p is %p', (actual, expected) => {
      expect(
        matches({ key: 'country', operator: 'exact', value: ['US', 'CA', 'Uk'] }, { country: actual }),
      ).toBe(expected);
    });

    // test_match_properties_exact_empty_array_never_matches
    it('never matches an empty list against a plain value', () => {
      expect(matches({ key: 'country', operator: 'exact', value: [] }, { country: 'us' })).toBe(false);
    });

    it('compares booleans and "true"/"false" by truthiness', () => {
      expect(matches({ value: true }, { key: 'TRUE' })).toBe(true);
      expect(matches({ value: 'false' }, { key: false })).toBe(true);
      expect(matches({ value: ['true'] }, { key: true })).toBe(true);
      // TRICKY: PostHog's truthiness compare makes `false` match anything not truthy.
      expect(matches({ value: false }, { key: 'no' })).toBe(true);
      expect(matches({ value: true }, { key: 'yes' })).toBe(false);
    });

    it('compares numbers by their JSON text', () => {
      expect(matches({ value: '5' }, { key: 5 })).toBe(true);
      expect(matches({ value: 1.5 }, { key: '1.5' })).toBe(true);
      expect(matches({ value: '[1,2]' }, { key: [1, 2] })).toBe(true);
    });
  });

  // test_match_properties_is_not
  describe('is_not', () => {
    it.each([
      ['value2', true],
      ['', true],
      [null, true],
      ['value', false],
    ])('is_not "value" against %p is %p', (actual, expected) => {
      expect(matches({ operator: 'is_not', value: 'value' }, { key: actual })).toBe(expected);
    });

    it('excludes every item of a list', () => {
      const filter = { operator: 'is_not', value: ['value1', 'value2', 'value3'] };
      expect(matches(filter, { key: 'value4' })).toBe(true);
      expect(matches(filter, { key: null })).toBe(true);
      expect(matches(filter, { key: 'value2' })).toBe(false);
    });
  });

  // test_match_properties_is_set
  it('is_set matches any present value, null included', () => {
    for (const actual of ['value', 'value2', '', null])
      expect(matches({ operator: 'is_set' }, { key: actual })).toBe(true);
  });

  // test_match_properties_icontains
  describe('icontains', () => {
    it.each([
      ['value', true],
      ['vaLue4', true],
      ['343tfvalue5', true],
      ['Alakazam', false],
      [123, false],
    ])('icontains "valUe" in %p is %p', (actual, expected) => {
      expect(matches({ operator: 'icontains', value: 'valUe' }, { key: actual })).toBe(expected);
    });

    it.each([
      ['3', true],
      [323, true],
      ['val3', true],
      ['three', false],
    ])('icontains "3" in %p is %p', (actual, expected) => {
      expect(matches({ operator: 'icontains', value: '3' }, { key: actual })).toBe(expected);
    });

    it('lowercases ASCII only, like Rust to_ascii_lowercase', () => {
      expect(matches({ operator: 'icontains', value: 'É' }, { key: 'é' })).toBe(false);
    });
  });

  // test_match_properties_regex
  describe('regex', () => {
    it.each([
      ['3', true],
      [323, true],
      ['val3', true],
      ['three', false],
    ])('regex "3" in %p is %p', (actual, expected) => {
      expect(matches({ operator: 'regex', value: '3' }, { key: actual })).toBe(expected);
    });

    it('an invalid pattern matches neither regex nor not_regex', () => {
      expect(matches({ operator: 'regex', value: '?*' }, { key: 'value' })).toBe(false);
      expect(matches({ operator: 'not_regex', value: '?*' }, { key: 'value' })).toBe(false);
    });

    it('reads a numeric filter value as its text', () => {
      expect(matches({ operator: 'regex', value: 4 }, { key: '4' })).toBe(true);
      expect(matches({ operator: 'regex', value: 4 }, { key: 4 })).toBe(true);
      expect(matches({ operator: 'regex', value: 4 }, { key: 'value' })).toBe(false);
    });

    it('honours a leading (?i) flag as Rust regexes do', () => {
      expect(matches({ operator: 'regex', value: '(?i)^ANN@' }, { key: 'ann@posthog.com' })).toBe(true);
    });
  });

  // test_match_properties_math_operators
  describe('gt, gte, lt, lte', () => {
    it.each([
      [{ operator: 'gt', value: 1 }, 2, true],
      [{ operator: 'gt', value: 1 }, 0, false],
      [{ operator: 'gt', value: 1 }, '23', true],
      [{ operator: 'lt', value: 1 }, -3, true],
      [{ operator: 'lt', value: 1 }, 1, false],
      [{ operator: 'lt', value: 1 }, '1', false],
      [{ operator: 'gte', value: 1 }, 1, true],
      [{ operator: 'gte', value: 1 }, '3', true],
      [{ operator: 'lt', value: '43' }, '42', true],
      [{ operator: 'lt', value: '43' }, 42, true],
      [{ operator: 'lt', value: '43' }, 44, false],
      [{ operator: 'lt', value: '30' }, '29', true],
      [{ operator: 'lt', value: '30' }, 100, false],
    ])('%p against %p is %p', (filter, actual, expected) => {
      expect(matches(filter, { key: actual })).toBe(expected);
    });

    it('never matches a value that is not a number', () => {
      // posthog-node falls back to comparing text here; the server does not.
      expect(matches({ operator: 'gt', value: 1 }, { key: 'abc' })).toBe(false);
      expect(matches({ operator: 'lt', value: '123aloha' }, { key: 5 })).toBe(false);
      expect(matches({ operator: 'lt', value: 5 }, { key: null })).toBe(false);
    });
  });

  // test_match_properties_between_operator, ..._edge_cases, ..._malformed_filter_value
  describe('between', () => {
    it.each([
      [70000, true],
      [80000, true],
      ['75000', true],
      [69999, false],
      [80001, false],
    ])('[70000, 80000] holds %p: %p (not_between the opposite)', (actual, expected) => {
      expect(matches({ operator: 'between', value: [70000, 80000] }, { key: actual })).toBe(expected);
      expect(matches({ operator: 'not_between', value: [70000, 80000] }, { key: actual })).toBe(!expected);
    });

    it('treats a missing value as outside and a malformed range as no match', () => {
      expect(matches({ operator: 'between', value: ['70000', '80000'] }, {})).toBe(false);
      expect(matches({ operator: 'not_between', value: ['70000', '80000'] }, {})).toBe(true);
      for (const value of [75000, [70000], [80000, 70000], ['a', 'b'], ['NaN', 80000]]) {
        expect(matches({ operator: 'not_between', value }, { key: 75000 })).toBe(false);
      }
    });
  });

  describe('semver', () => {
    // test_semver_invalid_versions, test_semver_zero_padded_and_short_form_versions
    it.each([
      ['not-a-version', false],
      ['1.2.abc', false],
      [' 1.2.3', true],
      ['1.2.3 ', true],
      ['1.2.3.4', false],
      ['1..2.3', false],
      ['.1.2.3', false],
      ['01.02.03', true],
      ['3.07', true],
      ['3.0', true],
    ])('semver_gt 1.0.0 against %p is %p', (actual, expected) => {
      expect(matches({ operator: 'semver_gt', value: '1.0.0' }, { key: actual })).toBe(expected);
    });

    // test_semver_mobile_version_formats
    it('canonicalizes two-part and zero-padded mobile versions on both sides', () => {
      for (const version of ['3.08', '3.8', '3.8.0', '3.9', '3.10', '4.0.0']) {
        expect(matches({ operator: 'semver_gte', value: '3.08' }, { key: version })).toBe(true);
      }
      for (const version of ['3.07', '3.7', '2.48', '3.0']) {
        expect(matches({ operator: 'semver_gte', value: '3.08' }, { key: version })).toBe(false);
      }
      expect(matches({ operator: 'semver_gt', value: '3.9' }, { key: '3.10' })).toBe(true);
      expect(matches({ operator: 'semver_tilde', value: '3.08' }, { key: '3.8.5' })).toBe(true);
      expect(matches({ operator: 'semver_tilde', value: '3.08' }, { key: '3.9.0' })).toBe(false);
    });

    // test_semver_tilde_operator, test_semver_caret_operator, test_semver_wildcard_operator
    it.each([
      ['semver_tilde', '1.2.3', '1.2.4', true],
      ['semver_tilde', '1.2.3', '1.2.10', true],
      ['semver_tilde', '1.2.3', '1.3.0', false],
      ['semver_tilde', '1.2.3', '1.2.2', false],
      ['semver_tilde', 'v1.2.3', 'v1.2.5', true],
      ['semver_caret', '1.2.3', '1.10.5', true],
      ['semver_caret', '1.2.3', '2.0.0', false],
      ['semver_caret', '1.2.3', '1.1.9', false],
      ['semver_caret', '0.0.3', '0.0.4', false],
      ['semver_caret', '0.2.3', '0.2.9', true],
      ['semver_caret', '0.2.3', '0.3.0', false],
      ['semver_wildcard', '1.2.*', '1.2.0', true],
      ['semver_wildcard', '1.2.*', '1.3.0', false],
      ['semver_wildcard', '1.*', '1.9.9', true],
      ['semver_wildcard', '1.*.3', '1.2.3', false],
      ['semver_tilde', 'not-a-version', '1.0.0', false],
    ])('%s %p against %p is %p', (operator, value, actual, expected) => {
      expect(matches({ operator, value }, { key: actual })).toBe(expected);
    });

    it('orders a pre-release below its release, as the semver crate does', () => {
      // posthog-node ignores the pre-release and calls these equal.
      expect(matches({ operator: 'semver_lt', value: '1.0.0' }, { key: '1.0.0-beta.1' })).toBe(true);
      expect(matches({ operator: 'semver_eq', value: '1.0.0' }, { key: '1.0.0-beta.1' })).toBe(false);
      expect(matches({ operator: 'semver_caret', value: '1.0.0' }, { key: '1.2.0-rc.1' })).toBe(false);
    });

    // test_semver_missing_property
    it('a missing version does not match', () => {
      expect(matches({ operator: 'semver_gt', value: '1.0.0' }, { other_key: '1.0.0' })).toBe(false);
    });
  });

  describe('dates', () => {
    it('compares ISO dates and timestamps in seconds', () => {
      expect(
        matches({ operator: 'is_date_before', value: '2024-01-15' }, { key: '2024-01-14T23:59:59Z' }),
      ).toBe(true);
      expect(matches({ operator: 'is_date_after', value: '2024-01-15' }, { key: '2024-01-15' })).toBe(false);
      expect(
        matches({ operator: 'is_date_exact', value: '2024-01-15' }, { key: '2024-01-15T00:00:00Z' }),
      ).toBe(true);
      // A number is seconds since the epoch for the server (posthog-node reads milliseconds).
      expect(matches({ operator: 'is_date_after', value: '2024-01-01' }, { key: 1_704_153_600 })).toBe(true);
      expect(matches({ operator: 'is_date_after', value: '2024-01-01' }, { key: '1704153600.5' })).toBe(true);
    });

    it('counts relative dates back from now', () => {
      // options.now is 2026-03-15T12:00:00Z
      expect(matches({ operator: 'is_date_after', value: '-7d' }, { key: '2026-03-09T00:00:00Z' })).toBe(
        true,
      );
      expect(matches({ operator: 'is_date_after', value: '-7d' }, { key: '2026-03-08T11:00:00Z' })).toBe(
        false,
      );
      expect(matches({ operator: 'is_date_before', value: '-1m' }, { key: '2026-02-14T12:00:00Z' })).toBe(
        true,
      );
      expect(matches({ operator: 'is_date_before', value: '-1y' }, { key: '2025-03-15T13:00:00Z' })).toBe(
        false,
      );
      expect(matches({ operator: 'is_date_after', value: '-12h' }, { key: '2026-03-15T00:00:01Z' })).toBe(
        true,
      );
    });

    it('reads naive dates in the project timezone', () => {
      const newYork = { timezone: 'America/New_York', now: options.now };
      // Midnight in New York is 05:00 UTC in January.
      expect(
        matchProperty(
          { key: 'key', operator: 'is_date_before', value: '2024-01-15' },
          { key: '2024-01-15T04:59:59Z' },
          newYork,
        ),
      ).toBe(true);
      expect(
        matchProperty(
          { key: 'key', operator: 'is_date_before', value: '2024-01-15' },
          { key: '2024-01-15T05:00:01Z' },
          newYork,
        ),
      ).toBe(false);
    });

    it('does not match an unreadable date on either side', () => {
      expect(matches({ operator: 'is_date_before', value: 'not a date' }, { key: '2024-01-01' })).toBe(false);
      expect(matches({ operator: 'is_date_before', value: '2024-01-01' }, { key: 'yesterday-ish' })).toBe(
        false,
      );
      expect(matches({ operator: 'is_date_before', value: '2024-01-01' }, { key: true })).toBe(false);
    });
  });

  describe('a property the person does not have', () => {
    // Complete properties: PostHog's server decides; posthog-node would call all of these inconclusive.
    it.each([
      ['exact', 'x', false],
      ['is_not', 'x', true],
      ['icontains', 'x', false],
      ['not_icontains', 'x', true],
      ['regex', 'x', false],
      ['not_regex', 'x', true],
      ['starts_with', 'x', false],
      ['not_starts_with', 'x', true],
      ['ends_with', 'x', false],
      ['not_ends_with', 'x', true],
      ['gt', 1, false],
      ['lte', 1, false],
      ['is_date_before', '2024-01-01', false],
      ['semver_eq', '1.0.0', false],
      ['is_set', null, false],
      ['is_not_set', null, true],
    ])('%s is %p', (operator, value, expected) => {
      expect(matches({ operator, value: value }, { other: 'x' })).toBe(expected);
    });

    it('is_not_set does not match a property that is present, even as null', () => {
      expect(matches({ operator: 'is_not_set' }, { key: null })).toBe(false);
    });
  });

  it('never matches a filter without a value, or an operator it does not know', () => {
    expect(matches({ operator: 'exact', value: null }, { key: 'null' })).toBe(false);
    expect(matches({ operator: 'in', value: 3 }, { key: 3 })).toBe(false);
    expect(matches({ operator: 'contains_emoji', value: 'x' }, { key: 'x' })).toBe(false);
  });

  it('does not read inherited keys as properties', () => {
    expect(matches({ key: 'constructor', operator: 'is_set' }, {})).toBe(false);
  });
});

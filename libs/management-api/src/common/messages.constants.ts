/** DRF's default validation messages, which PostHog clients see. */
export const messages = {
  required: 'This field is required.',
  blank: 'This field may not be blank.',
  string: 'Not a valid string.',
  boolean: 'Must be a valid boolean.',
  integer: 'A valid integer is required.',
  email: 'Enter a valid email address.',
  maxLength: (max: number) => `Ensure this field has no more than ${max} characters.`,
  choice: (value: unknown) => `"${String(value)}" is not a valid choice.`,
};

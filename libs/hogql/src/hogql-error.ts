/** Which request parameter an error is about, as PostHog's `attr` names it. */
export type HogQLErrorAttr = 'select' | 'where' | 'properties' | 'hogql_query';

/**
 * What went wrong, for callers that want more than the message:
 * - `syntax`: the text does not parse;
 * - `unsupported`: valid HogQL that this service does not allow (unknown field or function,
 *   subquery, `team_id`, ...);
 * - `type`: the parts do not fit together (comparing a date with a number, ...);
 * - `value`: a literal or filter value is out of range or malformed (bad regex, bad date, ...);
 * - `limit`: the input is larger or more complex than the configured bounds.
 */
export type HogQLErrorKind = 'syntax' | 'unsupported' | 'type' | 'value' | 'limit';

export interface HogQLErrorOptions {
  kind: HogQLErrorKind;
  attr?: HogQLErrorAttr;
  /** The expression (or sub-expression) the error is about, as the user wrote it. */
  expression?: string;
}

/**
 * A user error in a `select`, `where` or `properties` parameter, or in a batch export's
 * `hogql_query`. The message names the offending expression and is safe to show to the user; the
 * API answers it with a 400.
 */
export class HogQLError extends Error {
  override readonly name = 'HogQLError';
  readonly kind: HogQLErrorKind;
  readonly attr: HogQLErrorAttr | undefined;
  readonly expression: string | undefined;

  constructor(message: string, options: HogQLErrorOptions) {
    super(message);
    this.kind = options.kind;
    this.attr = options.attr;
    this.expression = options.expression;
  }

  /** The same error, told which request parameter it came from (when it did not know yet). */
  withAttr(attr: HogQLErrorAttr): HogQLError {
    if (this.attr) return this;
    return new HogQLError(this.message, { kind: this.kind, attr, expression: this.expression });
  }
}

export function isHogQLError(error: unknown): error is HogQLError {
  return error instanceof HogQLError;
}

const MAX_QUOTED_LENGTH = 120;

/** Quotes user text for an error message, shortened so a huge input does not make a huge error. */
export function quoteExpression(text: string): string {
  const characters = Array.from(text);
  const shown =
    characters.length > MAX_QUOTED_LENGTH ? `${characters.slice(0, MAX_QUOTED_LENGTH).join('')}…` : text;
  return `"${shown}"`;
}

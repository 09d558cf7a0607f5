/** Which request parameter an error is about, as PostHog's `attr` names it. */
export type HogQLErrorAttr = 'select' | 'where' | 'properties' | 'hogql_query';

/** `unsupported`: valid HogQL this service does not allow; `value`: a malformed literal or filter value. */
export type HogQLErrorKind = 'syntax' | 'unsupported' | 'type' | 'value' | 'limit';

export interface HogQLErrorOptions {
  kind: HogQLErrorKind;
  attr?: HogQLErrorAttr;
  /** As the user wrote it. */
  expression?: string;
}

/** A user error (400): the message names the offending expression and is safe to show. */
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

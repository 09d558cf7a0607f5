/** One element of an autocapture event, as PostHog's ElementSerializer shows it. */
export interface ElementRecord {
  event: null;
  text: string | null;
  tag_name: string | null;
  attr_class: string[] | null;
  href: string | null;
  attr_id: string | null;
  nth_child: number | null;
  nth_of_type: number | null;
  attributes: Record<string, string>;
  order: number;
}

// The elements_chain grammar, as PostHog writes and reads it:
//   tag.class1.class2:key="value"key2="value2";tag2...
// Elements are split on `;` outside quotes; a value's quotes are backslash-escaped.
const ELEMENT = /(?:[^\s;"]|"(?:\\.|[^"])*")+/g;
// Tag and classes, then the attributes after the first `:` that starts `key=` (classes may hold `:`).
const TAG_AND_ATTRIBUTES = /^(.*?)(?:$|:([a-zA-Z\-_0-9]*=.*))/;
const ATTRIBUTE = /(.*?)="(.*?[^\\])"/g;

/** Longer chains are returned raw only: the regexes are quadratic on pathological input. */
export const MAX_PARSED_CHAIN_LENGTH = 65_536;

/** PostHog's chain_to_elements: the chain parsed into elements, innermost first. */
export function chainToElements(chain: string): ElementRecord[] {
  if (chain === '' || chain.length > MAX_PARSED_CHAIN_LENGTH) return [];
  const elements: ElementRecord[] = [];
  for (const [order, [text]] of [...chain.matchAll(ELEMENT)].entries()) {
    const element: ElementRecord = {
      event: null,
      text: null,
      tag_name: null,
      attr_class: null,
      href: null,
      attr_id: null,
      nth_child: null,
      nth_of_type: null,
      attributes: {},
      order,
    };
    const [, tagPart = '', attributePart = ''] = TAG_AND_ATTRIBUTES.exec(text) ?? [];
    if (tagPart) {
      const [tag, ...classes] = tagPart.split('.');
      element.tag_name = tag;
      if (classes.length > 0) element.attr_class = classes.filter((name) => name !== '');
    }
    for (const [, key, value] of attributePart.matchAll(ATTRIBUTE)) {
      switch (key) {
        case 'href':
          element.href = value;
          break;
        case 'nth-child':
          element.nth_child = integerOrNull(value);
          break;
        case 'nth-of-type':
          element.nth_of_type = integerOrNull(value);
          break;
        case 'text':
          element.text = value;
          break;
        case 'attr_id':
          element.attr_id = value;
          break;
        default:
          if (key) element.attributes[key] = value;
      }
    }
    elements.push(element);
  }
  return elements;
}

function integerOrNull(value: string): number | null {
  return /^-?\d{1,15}$/.test(value) ? Number(value) : null;
}

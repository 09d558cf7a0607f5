/**
 * PostHog's `elements_chain` column: posthog-js sends the string as `$elements_chain` or, older SDKs,
 * a `$elements` array; either way the property leaves `properties`, as PostHog's ingestion does.
 */
export interface SplitElements {
  properties: Record<string, unknown>;
  elementsChain: string;
}

const MAX_TEXT = 400;
const MAX_HREF = 2048;

export function splitElements(properties: Record<string, unknown>): SplitElements {
  if (!('$elements' in properties) && !('$elements_chain' in properties)) {
    return { properties, elementsChain: '' };
  }
  const { $elements: elements, $elements_chain: chain, ...rest } = properties;
  if (typeof chain === 'string' && chain !== '') return { properties: rest, elementsChain: chain };
  if (Array.isArray(elements) && elements.length > 0) {
    const records = elements.filter(isRecord);
    return { properties: rest, elementsChain: records.map(elementToString).join(';') };
  }
  // An empty `$elements`/`$elements_chain` says nothing: dropped like a full one.
  return { properties: rest, elementsChain: '' };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
const escapeQuotes = (value: string): string => value.replaceAll('"', '\\"');

/** One element as PostHog writes it (elementsToString): classes and attributes sorted. */
function elementToString(element: Record<string, unknown>): string {
  const tag = text(element.tag_name) ?? '';
  const classes = (text(element.attr__class) ?? '')
    .split(' ')
    .filter(Boolean)
    .sort()
    .map((name) => `.${name.replaceAll('"', '')}`)
    .join('');
  const attributes: Record<string, string> = {
    'nth-child': text(element.nth_child) ?? '0',
    'nth-of-type': text(element.nth_of_type) ?? '0',
  };
  const elementText = text(element.$el_text)?.slice(0, MAX_TEXT);
  if (elementText) attributes.text = elementText;
  const href = text(element.attr__href)?.slice(0, MAX_HREF);
  if (href) attributes.href = href;
  const id = text(element.attr__id);
  if (id) attributes.attr_id = id;
  for (const [key, value] of Object.entries(element)) {
    const valueText = text(value);
    if (key.startsWith('attr__') && valueText !== undefined) attributes[key] = valueText;
  }
  const pairs = Object.entries(attributes)
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([key, value]) => `${escapeQuotes(key)}="${escapeQuotes(value)}"`)
    .join('');
  return `${tag}${classes}:${pairs}`;
}

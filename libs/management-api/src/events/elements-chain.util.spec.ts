import { chainToElements, MAX_PARSED_CHAIN_LENGTH } from './elements-chain.util';

describe('chainToElements', () => {
  it('parses tags, classes and attributes of each element in order', () => {
    const chain =
      'a.btn.btn-primary:attr__href="/signup"attr_id="cta"href="/signup"nth-child="2"nth-of-type="1"text="Sign up";' +
      'div.hero:nth-child="1"nth-of-type="1"';
    expect(chainToElements(chain)).toEqual([
      {
        event: null,
        text: 'Sign up',
        tag_name: 'a',
        attr_class: ['btn', 'btn-primary'],
        href: '/signup',
        attr_id: 'cta',
        nth_child: 2,
        nth_of_type: 1,
        attributes: { attr__href: '/signup' },
        order: 0,
      },
      {
        event: null,
        text: null,
        tag_name: 'div',
        attr_class: ['hero'],
        href: null,
        attr_id: null,
        nth_child: 1,
        nth_of_type: 1,
        attributes: {},
        order: 1,
      },
    ]);
  });

  it('keeps semicolons and escaped quotes inside values, and colons inside classes', () => {
    const [element] = chainToElements('button.a:b:text="say \\"hi\\"; then go"nth-child="1"');
    expect(element.tag_name).toBe('button');
    expect(element.attr_class).toEqual(['a:b']);
    expect(element.text).toBe('say \\"hi\\"; then go');
  });

  it('reads a non-numeric position as null instead of failing', () => {
    expect(chainToElements('li:nth-child="x"')[0].nth_child).toBeNull();
  });

  it('returns no elements for an empty or oversized chain', () => {
    expect(chainToElements('')).toEqual([]);
    expect(chainToElements('a'.repeat(MAX_PARSED_CHAIN_LENGTH + 1))).toEqual([]);
  });
});

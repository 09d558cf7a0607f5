import { splitElements } from './elements-chain.util';

describe('splitElements', () => {
  it("turns posthog-js's $elements into PostHog's elements_chain and drops the property", () => {
    const { properties, elementsChain } = splitElements({
      $browser: 'Chrome',
      $elements: [
        {
          tag_name: 'button',
          $el_text: 'Buy "now"',
          attr__class: 'primary btn',
          attr__id: 'buy',
          nth_child: 2,
          nth_of_type: 1,
        },
        { tag_name: 'div', attr__class: 'card', nth_child: 1, nth_of_type: 1 },
      ],
    });
    expect(properties).toEqual({ $browser: 'Chrome' });
    expect(elementsChain).toBe(
      'button.btn.primary:attr__class="primary btn"attr__id="buy"attr_id="buy"nth-child="2"nth-of-type="1"text="Buy \\"now\\"";' +
        'div.card:attr__class="card"nth-child="1"nth-of-type="1"',
    );
  });

  it('takes $elements_chain as it is, moved out of the properties', () => {
    expect(splitElements({ a: 1, $elements_chain: 'a:href="/x"' })).toEqual({
      properties: { a: 1 },
      elementsChain: 'a:href="/x"',
    });
  });

  it('leaves events without elements alone, dropping empty element properties', () => {
    const properties = { a: 1 };
    expect(splitElements(properties).properties).toBe(properties);
    expect(splitElements({ a: 1, $elements: [], $elements_chain: '' })).toEqual({
      properties: { a: 1 },
      elementsChain: '',
    });
  });

  it('skips elements that are not objects', () => {
    expect(splitElements({ $elements: ['x', null, { tag_name: 'a' }] }).elementsChain).toBe(
      'a:nth-child="0"nth-of-type="0"',
    );
  });
});

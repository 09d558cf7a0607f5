// @ts-check

/**
 * Typed `unknown`: the caller states the shape it expects.
 * @param {string} text
 * @returns {unknown}
 */
export function parseJson(text) {
  return JSON.parse(text);
}

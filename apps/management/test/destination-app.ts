/** A destination app: plugin.json with a config schema, and a TypeScript entry with composeWebhook (and onEvent). */
export function destinationApp(
  version: string,
  options: { withOnEvent?: boolean } = {},
): Record<string, string> {
  return {
    'package.json': JSON.stringify({ name: 'hog-destination', version }),
    'plugin.json': JSON.stringify({
      name: 'Hog destination',
      description: 'Sends events to a webhook',
      config: [
        { key: 'url', name: 'Webhook URL', type: 'string', required: true },
        { key: 'token', name: 'Token', type: 'string', secret: true },
      ],
    }),
    'index.ts': [
      "import { format } from './format';",
      'export function composeWebhook(event: { event: string }, { config }: { config: Record<string, string> }) {',
      '  return { url: config.url, body: format(event.event), method: "POST" };',
      '}',
      options.withOnEvent ? 'export async function onEvent(): Promise<void> {}' : '',
    ].join('\n'),
    'format.ts': 'export const format = (name: string): string => JSON.stringify({ name });',
  };
}

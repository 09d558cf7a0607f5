import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';

/**
 * Text that is not valid UTF-16 (a lone surrogate, which JSON can carry as `"\ud800"`) used to
 * reach ClickHouse, which refused the whole insert: capture answered 503 and SDKs retried forever.
 */
describe('npm start: events whose text is not valid UTF-16', () => {
  let standalone: StandaloneForTest | undefined;
  let managementUrl: string;
  let captureUrl: string;
  let credentials: InitialCredentials;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-invalid-text-test-');
    ({ managementUrl, captureUrl, credentials } = standalone);
  }, READY_TIMEOUT_MS * 2);

  afterAll(async () => {
    // How the server exits is not what this file tests: stop() kills it and removes DATA_DIR anyway.
    await standalone?.stop().catch(() => undefined);
  });

  it('stores a batch with a lone-surrogate event name, the name as U+FFFD, and the rest of the batch', async () => {
    // Written as JSON text: the escapes must reach the server as they are.
    const body = `{"api_key": "${credentials.project_api_key}", "batch": [
      {"event": "\\ud800", "distinct_id": "surrogate-user", "properties": {"note\\udc00": "x\\udbff"}},
      {"event": "after the surrogate", "distinct_id": "surrogate-user"}
    ]}`;
    const response = await fetch(`${captureUrl}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);

    const listed = await fetch(
      `${managementUrl}/api/projects/${credentials.project_id}/events/?distinct_id=surrogate-user`,
      { headers: { Authorization: `Bearer ${credentials.personal_api_key}` } },
    );
    expect(listed.status).toBe(200);
    const { results } = (await listed.json()) as {
      results: { event: string; properties: Record<string, unknown> }[];
    };
    expect(results.map((event) => event.event).sort()).toEqual(['after the surrogate', '\uFFFD']);
    const replaced = results.find((event) => event.event === '\uFFFD');
    expect(replaced?.properties['note\uFFFD']).toBe('x\uFFFD');
  });

  it('keeps serving capture after it', async () => {
    const response = await fetch(`${captureUrl}/capture/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: credentials.project_api_key, event: 'fine', distinct_id: 'u' }),
    });
    expect(response.status).toBe(200);
  });
});

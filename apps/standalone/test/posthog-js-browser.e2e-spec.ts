import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import type { Browser, Page, Request, Route } from 'playwright-core';
import type { PostHog } from 'posthog-js';
import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';
import {
  describeWithChromium,
  launchChromium,
  listedEvents,
  openPage,
  startSitePages,
  type ListedEvent,
  type SitePages,
} from './browser-page.util';
import { createFeatureFlags, managementApi } from './management-request';

/**
 * posthog-js 1.449 in headless Chromium against one `npm start`, with the settings a customer pastes
 * from the snippet: remote config and `/flags` at init, the page view, autocapture on a click,
 * identify, feature flags with payloads and `$feature_flag_called`, and the project's autocapture
 * switch. Everything is read back as a user would: through the management API's event listing.
 *
 * NOTE: posthog-js batches events and sends them on its 3 s flush timer; the defaults are kept
 * (no `request_batching: false`), so each test waits for that timer while its page stays open.
 */

const SUITE = 'npm start: posthog-js in headless Chromium (remote config, events, identify, flags)';

const BUTTON = '<button class="buy-button primary" type="button">Buy now</button>';

const CHECKOUT_PAYLOAD = { color: 'green', steps: 2 };
const PRICING_PAYLOAD = { period: 'year', discount: 20 };
const FLAGS: Record<string, unknown>[] = [
  {
    key: 'new-checkout',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      payloads: { true: JSON.stringify(CHECKOUT_PAYLOAD) },
    },
  },
  {
    // One variant at 100 %: every visitor gets `annual`, so the answer does not hang on the hash.
    key: 'pricing-page',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'monthly', rollout_percentage: 0 },
          { key: 'annual', rollout_percentage: 100 },
        ],
      },
      payloads: { annual: JSON.stringify(PRICING_PAYLOAD) },
    },
  },
];

interface CapturedEvent {
  event: string;
  properties: Record<string, unknown>;
}

interface PageGlobals {
  posthog: PostHog;
}

/** Every response (or failure) a page got from the capture origin, as `STATUS METHOD /path`. */
interface CaptureTraffic {
  responses: string[];
  failures: string[];
}

describeWithChromium(SUITE)(SUITE, () => {
  let standalone: StandaloneForTest | undefined;
  let site: SitePages | undefined;
  let browser: Browser | undefined;
  let captureUrl: string;
  let managementUrl: string;
  let credentials: InitialCredentials;
  const allTraffic: CaptureTraffic = { responses: [], failures: [] };

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-posthog-js-test-', { LOG_LEVEL: 'warn' });
    ({ captureUrl, managementUrl, credentials } = standalone);
    // Before any page loads: posthog-js asks `/flags` once at init.
    await createFeatureFlags(managementUrl, credentials, FLAGS);
    site = await startSitePages({
      '/': {
        token: credentials.project_api_key,
        init: {
          api_host: captureUrl,
          // Headless Chromium says HeadlessChrome in its user agent, which posthog-js drops as a bot;
          // the one setting that is not the snippet's default.
          opt_out_useragent_filter: true,
        },
        body: `<p>shop</p>${BUTTON}`,
      },
    });
    browser = await launchChromium();
  }, READY_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    // What the server logged at warn and above, to tell a server fault from a test fault.
    const problems = (standalone?.server.output() ?? '')
      .split('\n')
      .filter((line) => /"level":[4-6]0/.test(line));
    if (problems.length > 0) console.warn(`npm start logged:\n${problems.join('\n')}`);
    await browser?.close();
    await site?.close();
    await standalone?.stop().catch(() => undefined);
  });

  /**
   * The site's page in a fresh context (a new anonymous visitor), recording every response from the
   * capture origin into the page's traffic and the suite's.
   */
  async function openShop(prepare?: (page: Page) => Promise<void> | void) {
    const traffic: CaptureTraffic = { responses: [], failures: [] };
    const fromCapture = (url: string) => url.startsWith(`${captureUrl}/`);
    const opened = await openPage(browser!, site!.url(), async (page) => {
      page.on('response', (response) => {
        if (!fromCapture(response.url())) return;
        const line = `${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`;
        traffic.responses.push(line);
        allTraffic.responses.push(line);
      });
      page.on('requestfailed', (request: Request) => {
        if (!fromCapture(request.url())) return;
        const line = `${request.failure()?.errorText ?? 'failed'} ${request.method()} ${request.url()}`;
        traffic.failures.push(line);
        allTraffic.failures.push(line);
      });
      await prepare?.(page);
    });
    const distinctId = await opened.page.evaluate(() =>
      (globalThis as unknown as PageGlobals).posthog.get_distinct_id(),
    );
    return { ...opened, traffic, distinctId };
  }

  /** Resolves once capture answered a request `line` matches, or after `timeoutMs` (the assertion after it says what is missing). */
  async function answered(traffic: CaptureTraffic, line: RegExp, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!traffic.responses.some((response) => line.test(response)) && Date.now() < deadline) {
      await sleep(50);
    }
  }

  /** Resolves once posthog-js applied the remote config and turned autocapture on. */
  async function autocaptureStarted(page: Page): Promise<void> {
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).posthog.autocapture?.isEnabled === true,
    );
  }

  const listed = (query: Record<string, string>, count: number, timeoutMs?: number) =>
    listedEvents(managementUrl, credentials, query, count, timeoutMs);

  it('loads the remote config and /flags at init, every capture answer a 200', async () => {
    const { page, close, traffic, distinctId } = await openShop();
    try {
      await listed({ event: '$pageview', distinct_id: distinctId }, 1);
      // posthog-js asks for the flags once the remote config is in, and does not hold its first
      // batch for their answer: on a busy machine the page view may be stored first.
      await answered(traffic, /^200 POST \/flags\/?$/);
      const config = new RegExp(`^200 GET /array/${credentials.project_api_key}/config(\\.js)?$`);
      expect(traffic.responses).toContainEqual(expect.stringMatching(config));
      expect(traffic.responses).toContainEqual(expect.stringMatching(/^200 POST \/flags\/?$/));
      expect(traffic.responses).toContainEqual(expect.stringMatching(/^200 POST \/(e|i\/v0\/e)\/?$/));
      expect(traffic.responses.filter((line) => !line.startsWith('200 '))).toEqual([]);
      expect(traffic.failures).toEqual([]);
      expect(
        await page.evaluate(() => (globalThis as unknown as PageGlobals).posthog.get_distinct_id()),
      ).toBe(distinctId);
    } finally {
      await close();
    }
  }, 60_000);

  it('lists the page view with its URL', async () => {
    const { close, distinctId } = await openShop();
    try {
      const [pageview] = await listed({ event: '$pageview', distinct_id: distinctId }, 1);
      expect(pageview?.properties).toMatchObject({
        $current_url: site!.url(),
        $lib: 'web',
        $pathname: '/',
        $host: new URL(site!.url()).host,
      });
      expect(pageview?.distinct_id).toBe(distinctId);
    } finally {
      await close();
    }
  }, 60_000);

  /** The `$autocapture` event of one click on the page's button, as the listing shows it. */
  async function clickButton(prepare?: (page: Page) => Promise<void> | void): Promise<{
    event: ListedEvent | undefined;
    sent: Record<string, unknown>[];
  }> {
    const sent: Record<string, unknown>[] = [];
    const { page, close, distinctId } = await openShop(async (page) => {
      // What posthog-js put on the wire for the click, to tell which form of the elements it sent.
      page.on('request', (request) => {
        if (request.method() !== 'POST' || !/\/(e|i\/v0\/e)\/?(\?|$)/.test(new URL(request.url()).pathname)) {
          return;
        }
        const body = request.postDataBuffer();
        if (body === null) return;
        // posthog-js gzips its batches when the remote config lists gzip (`?compression=gzip-js`).
        const text = (body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body) : body).toString('utf8');
        const payload = JSON.parse(text) as CapturedEvent | CapturedEvent[] | { batch: CapturedEvent[] };
        const events = 'batch' in payload ? payload.batch : [payload].flat();
        for (const event of events) if (event.event === '$autocapture') sent.push(event.properties);
      });
      await prepare?.(page);
    });
    try {
      await autocaptureStarted(page);
      await page.click('button.buy-button');
      const [event] = await listed({ event: '$autocapture', distinct_id: distinctId }, 1);
      return { event, sent };
    } finally {
      await close();
    }
  }

  function expectButtonClick(event: ListedEvent | undefined): void {
    expect(event?.properties).toMatchObject({ $event_type: 'click', $lib: 'web' });
    expect(event?.elements_chain).toMatch(/^button\.buy-button\.primary:/);
    expect(event?.elements_chain).toContain('text="Buy now"');
    expect(event?.elements?.[0]).toMatchObject({
      tag_name: 'button',
      text: 'Buy now',
      attr_class: ['buy-button', 'primary'],
    });
    expect(event?.elements?.map((element) => element.tag_name)).toEqual(['button', 'body']);
  }

  it('lists a click on a button as $autocapture with its elements', async () => {
    const { event, sent } = await clickButton();
    expectButtonClick(event);
    // Which form posthog-js chose follows the remote config's elementsChainAsString.
    expect(sent).toHaveLength(1);
  }, 60_000);

  it('lists the click in both forms posthog-js sends: $elements_chain and $elements', async () => {
    // NOTE: the form follows the remote config's `elementsChainAsString`, so the other form is
    // reached by flipping that field in the answer the page gets (the rest of it is capture's).
    const flip = (asString: boolean) => async (page: Page) => {
      await page.route(`${captureUrl}/array/**`, async (route: Route) => {
        const response = await route.fetch();
        const body = await response.text();
        // config.js is a script filling `_POSTHOG_REMOTE_CONFIG[token].config`; config is JSON.
        const flipped = new URL(route.request().url()).pathname.endsWith('.js')
          ? `${body}\n;window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(credentials.project_api_key)}].config.elementsChainAsString = ${String(asString)};`
          : JSON.stringify({ ...(JSON.parse(body) as object), elementsChainAsString: asString });
        await route.fulfill({ response, body: flipped });
      });
    };
    const asString = await clickButton(flip(true));
    expect(asString.sent).toEqual([expect.objectContaining({ $elements_chain: expect.any(String) })]);
    expect(asString.sent[0]).not.toHaveProperty('$elements');
    expectButtonClick(asString.event);

    // posthog-js sends the chain either way; the list comes only when the config does not ask for strings.
    const asList = await clickButton(flip(false));
    expect(asList.sent).toEqual([expect.objectContaining({ $elements: expect.any(Array) })]);
    expect((asList.sent[0]?.$elements as { tag_name: string }[])[0]).toMatchObject({ tag_name: 'button' });
    expectButtonClick(asList.event);
  }, 90_000);

  it('merges the anonymous visitor into the identified person', async () => {
    const { page, close, distinctId: anonymousId } = await openShop();
    const user = `user-${anonymousId}`;
    const email = `${user}@example.com`;
    try {
      await autocaptureStarted(page);
      await page.click('button.buy-button');
      await page.evaluate(
        ({ user, email }) => {
          const { posthog } = globalThis as unknown as PageGlobals;
          posthog.identify(user, { email });
          posthog.capture('checkout started', { step: 1 });
        },
        { user, email },
      );
      expect(
        await page.evaluate(() => (globalThis as unknown as PageGlobals).posthog.get_distinct_id()),
      ).toBe(user);
      const [identify] = await listed({ event: '$identify', distinct_id: user }, 1);
      expect(identify?.properties).toMatchObject({ $anon_distinct_id: anonymousId, $set: { email } });
      await listed({ event: 'checkout started', distinct_id: user }, 1);
      const before = await listed({ distinct_id: anonymousId }, 2);
      const after = await listed({ distinct_id: user }, 2);
      // The page view and the click were sent before identify, under the anonymous id.
      expect(before.map((event) => event.event).sort()).toEqual(['$autocapture', '$pageview']);
      expect(after.map((event) => event.event).sort()).toEqual(['$identify', 'checkout started']);
      const person = {
        is_identified: true,
        distinct_ids: [anonymousId, user].sort(),
        properties: expect.objectContaining({ email }),
      };
      for (const event of [...before, ...after]) {
        expect({ event: event.event, person: event.person }).toEqual({ event: event.event, person });
      }
    } finally {
      await close();
    }
  }, 60_000);

  it('answers the flags and payloads the project defines, and lists $feature_flag_called', async () => {
    const { page, close, distinctId, traffic } = await openShop();
    try {
      const seen = await page.evaluate(
        () =>
          new Promise<Record<string, unknown>>((resolve) => {
            const { posthog } = globalThis as unknown as PageGlobals;
            posthog.onFeatureFlags(() =>
              resolve({
                checkout: posthog.isFeatureEnabled('new-checkout'),
                checkoutPayload: posthog.getFeatureFlagPayload('new-checkout'),
                pricing: posthog.getFeatureFlag('pricing-page'),
                pricingPayload: posthog.getFeatureFlagPayload('pricing-page'),
                unknown: posthog.getFeatureFlag('no-such-flag'),
              }),
            );
          }),
      );
      expect(traffic.responses).toContainEqual(expect.stringMatching(/^200 POST \/flags\/?$/));
      expect(seen).toEqual({
        checkout: true,
        checkoutPayload: CHECKOUT_PAYLOAD,
        pricing: 'annual',
        pricingPayload: PRICING_PAYLOAD,
        unknown: undefined,
      });
      const called = await listed({ event: '$feature_flag_called', distinct_id: distinctId }, 3);
      const answers = Object.fromEntries(
        called.map((event) => [event.properties.$feature_flag, event.properties.$feature_flag_response]),
      );
      expect(called).toHaveLength(3);
      // An unknown flag is reported too, with no answer (posthog-js sends `undefined`).
      expect(answers).toEqual({ 'new-checkout': true, 'pricing-page': 'annual', 'no-such-flag': undefined });
      expect(
        called.find((event) => event.properties.$feature_flag === 'no-such-flag')?.properties,
      ).not.toHaveProperty('$feature_flag_response');
      // And the flags travel on the events captured once they are known.
      await page.evaluate(() => (globalThis as unknown as PageGlobals).posthog.capture('flags seen'));
      const [flagsSeen] = await listed({ event: 'flags seen', distinct_id: distinctId }, 1);
      expect(flagsSeen?.properties).toMatchObject({
        '$feature/new-checkout': true,
        '$feature/pricing-page': 'annual',
        $active_feature_flags: expect.arrayContaining(['new-checkout', 'pricing-page']),
      });
    } finally {
      await close();
    }
  }, 60_000);

  it('sends no $autocapture once the project turns autocapture off', async () => {
    const api = managementApi(managementUrl, credentials.personal_api_key);
    const project = await api('PATCH', `/api/projects/${credentials.project_id}/`, {
      autocapture_opt_out: true,
    });
    expect(project).toMatchObject({ autocapture_opt_out: true });
    // Capture caches the remote config for 60 s, and drops it at once when Postgres notifies the
    // change: polling for less than the TTL proves the notification reached it.
    await expect(remoteConfigField('autocapture_opt_out', true)).resolves.toBe(true);

    const { page, close, distinctId } = await openShop();
    try {
      await page.waitForFunction(
        () =>
          (globalThis as unknown as PageGlobals).posthog.get_property('$autocapture_disabled_server_side') ===
          true,
      );
      await page.click('button.buy-button');
      // Sent after the click, in the same batch or a later one: once it is listed, an $autocapture
      // of that click would be too.
      await page.evaluate(() => (globalThis as unknown as PageGlobals).posthog.capture('after click marker'));
      await listed({ event: 'after click marker', distinct_id: distinctId }, 1);
      expect(await listed({ event: '$autocapture', distinct_id: distinctId }, 0)).toEqual([]);
      expect(await listed({ event: '$pageview', distinct_id: distinctId }, 1)).toHaveLength(1);
    } finally {
      await close();
      await api('PATCH', `/api/projects/${credentials.project_id}/`, { autocapture_opt_out: false });
    }
  }, 120_000);

  /** Polls capture's JSON remote config until `field` reads `value` (or 30 s passed); answers the last read. */
  async function remoteConfigField(field: string, value: unknown): Promise<unknown> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const response = await fetch(`${captureUrl}/array/${credentials.project_api_key}/config`);
      const config = (await response.json()) as Record<string, unknown>;
      if (config[field] === value || Date.now() > deadline) return config[field];
      await sleep(250);
    }
  }

  it('answered every request of every page with a 200', () => {
    expect(allTraffic.responses.length).toBeGreaterThan(0);
    expect(allTraffic.responses.filter((line) => !line.startsWith('200 '))).toEqual([]);
    expect(allTraffic.failures).toEqual([]);
  });
});

import { eventually, eventuallyPasses } from './eventually.util';

/** A probe that answers `answers` in turn, then its last answer again; counts how often it was asked. */
function scripted<T>(...answers: T[]): { probe: () => Promise<T>; asked: () => number } {
  let asked = 0;
  return {
    probe: () => Promise.resolve(answers[Math.min(asked++, answers.length - 1)]),
    asked: () => asked,
  };
}

describe('eventually', () => {
  it('asks again while the probe answers undefined or false, and returns the first value', async () => {
    const { probe, asked } = scripted<{ id: number } | undefined | false>(undefined, false, { id: 7 });

    await expect(eventually('the row', probe, { intervalMs: 1 })).resolves.toEqual({ id: 7 });
    expect(asked()).toBe(3);
  });

  it('takes 0 and the empty string as answers, not as "not yet"', async () => {
    await expect(eventually('a count', () => 0)).resolves.toBe(0);
    await expect(eventually('a line', () => '')).resolves.toBe('');
  });

  it('fails naming what it waited for and its timeout, with the context read at the deadline', async () => {
    let output = 'starting';
    const probe = () => {
      output = 'still starting';
      return false;
    };

    await expect(
      eventually('the app to listen', probe, { timeoutMs: 20, intervalMs: 1, context: () => output }),
    ).rejects.toThrow(new Error('timed out after 20 ms waiting for the app to listen:\nstill starting'));
  });

  it('fails without a context line when none is given', async () => {
    await expect(eventually('a value', () => undefined, { timeoutMs: 0, intervalMs: 1 })).rejects.toThrow(
      new Error('timed out after 0 ms waiting for a value'),
    );
  });

  it('fails at once, with its own error, when the probe throws', async () => {
    const refused = new Error('connection refused');
    let asked = 0;
    const probe = () => {
      asked += 1;
      return Promise.reject(refused);
    };

    await expect(eventually('the server', probe, { timeoutMs: 60_000 })).rejects.toBe(refused);
    expect(asked).toBe(1);
  });
});

describe('eventuallyPasses', () => {
  it('runs the assertion again until it passes', async () => {
    const { probe, asked } = scripted(1, 2, 3);

    await eventuallyPasses(async () => expect(await probe()).toBe(3), { intervalMs: 1 });
    expect(asked()).toBe(3);
  });

  it("throws the assertion's last failure at the deadline, so the report shows its diff", async () => {
    const { probe } = scripted('pending', 'running');
    let last: unknown;

    const failure = await eventuallyPasses(
      async () => {
        try {
          expect(await probe()).toBe('done');
        } catch (error) {
          last = error;
          throw error;
        }
      },
      { timeoutMs: 20, intervalMs: 1 },
    ).catch((error: unknown) => error);

    expect(failure).toBe(last);
    expect((failure as Error).message).toContain('"running"');
  });
});

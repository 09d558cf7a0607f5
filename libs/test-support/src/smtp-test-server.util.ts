import type { AddressInfo } from 'node:net';

import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMail {
  /** Address in the From header (what the recipient sees); the envelope sender if there is none. */
  from: string;
  /** Envelope recipients, so Bcc recipients are included. */
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface SmtpTestServer {
  /** Plain SMTP, no TLS, any credentials accepted. */
  url: string;
  messages: ReceivedMail[];
  /** The first match, already received or still to come. */
  waitForMessage(predicate: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

interface PendingWait {
  predicate: (mail: ReceivedMail) => boolean;
  resolve: (mail: ReceivedMail) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const DEFAULT_WAIT_TIMEOUT_MS = 5_000;
// A pooled client would otherwise hold stop() for smtp-server's 30 s grace period.
const CLOSE_TIMEOUT_MS = 500;

function toReceivedMail(parsed: ParsedMail, session: SMTPServerSession): ReceivedMail {
  const envelopeSender = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
  return {
    from: parsed.from?.value[0]?.address ?? envelopeSender,
    to: session.envelope.rcptTo.map((recipient) => recipient.address),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: parsed.html === false ? '' : parsed.html,
  };
}

export async function startSmtpTestServer(): Promise<SmtpTestServer> {
  const messages: ReceivedMail[] = [];
  const pendingWaits = new Set<PendingWait>();

  const settleWaits = (mail: ReceivedMail): void => {
    for (const wait of pendingWaits) {
      if (wait.predicate(mail)) {
        clearTimeout(wait.timer);
        pendingWaits.delete(wait);
        wait.resolve(mail);
      }
    }
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: CLOSE_TIMEOUT_MS,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          const mail = toReceivedMail(parsed, session);
          messages.push(mail);
          settleWaits(mail);
          callback();
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // After start-up a client error (a dropped connection) must not crash the test process.
  server.on('error', () => undefined);

  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitForMessage(predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) {
      const received = messages.find(predicate);
      if (received) return Promise.resolve(received);
      return new Promise<ReceivedMail>((resolve, reject) => {
        const wait: PendingWait = {
          predicate,
          resolve,
          reject,
          timer: setTimeout(() => {
            pendingWaits.delete(wait);
            const subjects = messages.map((mail) => JSON.stringify(mail.subject)).join(', ') || 'none';
            reject(new Error(`No matching mail within ${timeoutMs} ms; received subjects: ${subjects}`));
          }, timeoutMs),
        };
        pendingWaits.add(wait);
      });
    },
    stop() {
      for (const wait of pendingWaits) {
        clearTimeout(wait.timer);
        wait.reject(new Error('SMTP test server stopped before a matching mail arrived'));
      }
      pendingWaits.clear();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

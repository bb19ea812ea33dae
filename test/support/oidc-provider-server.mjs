/**
 * A real OpenID provider for the sign-in tests: `oidc-provider` (ESM-only, so it runs in a
 * process of its own), with minimal interaction routes instead of its HTML dev screens: a
 * POST of `login=<account>` to `/interaction/<uid>` signs that account in and consents to
 * what the client asked. Accounts carry `email`, `name` and a `groups` claim (userinfo).
 *
 * Environment: PORT (required), CLIENTS (JSON array of {client_id, client_secret, redirect_uris}).
 * Prints `ready <issuer>` on stdout once listening.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const ACCOUNTS = {
  alice: { email: 'alice@example.com', name: 'Alice Admin', groups: ['search-admins', 'later-viewers', 'unmapped-group'] },
  olga: { email: 'olga@example.com', name: 'Olga Owner', groups: ['platform-owners'] },
  nobody: { email: 'nobody@example.com', name: 'No Body', groups: ['unmapped-group'] },
};

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const clients = JSON.parse(process.env.CLIENTS ?? '[]');
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: `test-${port}`, use: 'sig', alg: 'RS256' }] },
  cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(_ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) return undefined;
    return { accountId: id, claims: () => ({ sub: id, email: account.email, email_verified: true, name: account.name, groups: account.groups }) };
  },
});
provider.on('server_error', (_ctx, error) => process.stderr.write(`oidc-provider server_error: ${error.stack}\n`));

const handle = provider.callback();
const server = createServer(async (req, res) => {
  const match = /^\/interaction\/([\w-]+)$/.exec(new URL(req.url, issuer).pathname);
  if (!match) return handle(req, res);
  try {
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET') {
      res.setHeader('content-type', 'text/html');
      return res.end(`<form method="post" action="/interaction/${details.uid}"><input name="login"><button>Sign in</button></form>`);
    }
    const body = new URLSearchParams(await new Promise((resolve) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => resolve(text));
    }));
    const accountId = body.get('login');
    if (!ACCOUNTS[accountId]) {
      res.statusCode = 400;
      return res.end(`unknown account ${accountId}`);
    }
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  } catch (error) {
    res.statusCode = 400;
    res.end(`interaction failed: ${error.message}`);
  }
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`ready ${issuer}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

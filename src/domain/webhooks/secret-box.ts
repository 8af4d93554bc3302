import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { ensureAppSecret, readAppSecret } from '../../db/app-secrets.js';
import type { Db } from '../../db/handle.js';

/**
 * Webhook signing secrets at rest (docs/events.md). The service signs with them, so they are kept
 * readable, encrypted with AES-256-GCM: `sealed1.<key id>.<iv>.<ciphertext>.<tag>`. The key is
 * SECRETS_KEY when set, else one generated once into app_secrets (as the MCP confirmation secret
 * is), which every process reads alike. A value sealed with the stored key still opens after
 * SECRETS_KEY is set; anything not sealed is a secret kept in plain text before, and opens as it is.
 */
export interface SecretBox {
  seal(plain: string): Promise<string>;
  open(stored: string): Promise<string>;
  /** What every value sealed with the current key starts with: other values are to be sealed again. */
  currentPrefix(): Promise<string>;
}

const STORED_KEY_NAME = 'secrets_key';
const VERSION = 'sealed1';

interface Key {
  id: string;
  key: Buffer;
}

function keyFrom(material: string): Key {
  const key = Buffer.from(hkdfSync('sha256', material, '', 'webhook signing secret', 32));
  return { id: createHash('sha256').update(key).digest('base64url').slice(0, 8), key };
}

/** The box; its keys are read on first use (starting the app needs no query), again after a failed read. */
export function webhookSecretBox(pool: Db, configured: string | undefined): SecretBox {
  let keys: Promise<{ current: Key; known: Map<string, Key> }> | undefined;
  const load = async () => {
    // With SECRETS_KEY set, no key is made here; one stored before still opens what it sealed.
    const stored = configured ? await readAppSecret(pool, STORED_KEY_NAME) : await ensureAppSecret(pool, STORED_KEY_NAME, () => randomBytes(32).toString('base64url'));
    const current = keyFrom(configured ?? stored!);
    const known = new Map([[current.id, current]]);
    if (configured && stored) {
      const old = keyFrom(stored);
      known.set(old.id, old);
    }
    return { current, known };
  };
  const loaded = () => {
    keys ??= load().catch((err: unknown) => {
      keys = undefined;
      throw err;
    });
    return keys;
  };
  return {
    async seal(plain) {
      const { current } = await loaded();
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(`${VERSION}.${current.id}`));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, current.id, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    async open(stored) {
      if (!stored.startsWith(`${VERSION}.`)) return stored;
      const [, id, iv, body, tag] = stored.split('.');
      const key = (await loaded()).known.get(id ?? '');
      if (!key) throw new Error('a webhook signing secret was sealed with another key: was SECRETS_KEY changed or unset?');
      const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv ?? '', 'base64url'));
      decipher.setAAD(Buffer.from(`${VERSION}.${key.id}`));
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body ?? '', 'base64url')), decipher.final()]).toString('utf8');
    },
    async currentPrefix() {
      return `${VERSION}.${(await loaded()).current.id}.`;
    },
  };
}

type SecretColumn = 'secret' | 'previous_secret';

/**
 * Seals one stored value again with the current key, if it is not sealed with it already and is
 * still the value read (so a rotation meanwhile is never undone). False when no known key opens it.
 */
export async function resealSecret(pool: Db, box: SecretBox, endpointId: number, column: SecretColumn, value: string): Promise<boolean> {
  if (value.startsWith(await box.currentPrefix())) return true;
  let sealed: string;
  try {
    sealed = await box.seal(await box.open(value));
  } catch {
    return false;
  }
  await pool.query({
    name: `webhook_endpoints_seal_${column}`,
    text: `UPDATE webhook_endpoints SET ${column} = $3 WHERE id = $1 AND ${column} = $2`,
    values: [endpointId, value, sealed],
  });
  return true;
}

/**
 * Seals every secret not sealed with the current key: kept in plain text before, or sealed with
 * the stored key before SECRETS_KEY was set. A value no known key opens is left as it is and
 * counted: its deliveries fail, saying why.
 */
export async function sealStoredSecrets(pool: Db, box: SecretBox): Promise<{ unreadable: number }> {
  const prefix = await box.currentPrefix();
  let unreadable = 0;
  for (const column of ['secret', 'previous_secret'] as const) {
    let after = 0;
    for (;;) {
      const { rows } = await pool.query<{ id: number; value: string }>({
        name: `webhook_endpoints_unsealed_${column}`,
        text: `SELECT id, ${column} AS value FROM webhook_endpoints
                WHERE id > $2 AND ${column} IS NOT NULL AND left(${column}, length($1)) <> $1 ORDER BY id LIMIT 100`,
        values: [prefix, after],
      });
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      for (const row of rows) if (!(await resealSecret(pool, box, row.id, column, row.value))) unreadable++;
    }
  }
  return { unreadable };
}

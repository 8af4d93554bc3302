import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { firstLine } from '../../src/cli/stdin.js';
import { createPublisher } from '../../src/domain/publishers/publisher-service.js';
import { roleIn } from '../../src/domain/users/memberships.js';
import { verifyCredentials } from '../../src/domain/users/user-service.js';
import { createWorkspace } from '../../src/domain/workspaces/workspace-service.js';
import { cleanupChildren, cliJson, runCli as runCliProcess, tempDataDir } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';

// `user create`, `user add`, `user set-password` (docs/cli.md), in process through the CLI helper;
// one run as a real process reads a piped password.

const database = await createTestDatabase({ max: 4 });
const env = { DATABASE_URL: database.url, DATA_DIR: tempDataDir() };
afterAll(async () => {
  await cleanupChildren();
  await database.drop();
}, 30_000);
const db = database.pool;

const admin = (args: string[], stdin?: string) => runCli(args, env, stdin === undefined ? {} : { stdin });
const ok = async (args: string[], stdin?: string) => {
  const r = await admin(args, stdin);
  return cliJson({ code: r.status, stdout: r.stdout, stderr: r.stderr });
};
const fails = async (args: string[], stdin?: string) => {
  const r = await admin(args, stdin);
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  return r.stderr.trim();
};

describe('user create', () => {
  it('refuses a taken email in another case, a bad email, a missing name, an empty or short stdin password', async () => {
    await ok(['user', 'create', '--email', 'taken@example.com', '--name', 'First']);
    expect(await fails(['user', 'create', '--email', 'TAKEN@example.com', '--name', 'Second'])).toBe('--email: is already taken by another user');
    expect(await fails(['user', 'create', '--email', 'nope', '--name', 'X'])).toMatch(/^--email: must be an email address/);
    expect(await fails(['user', 'create', '--email', 'x@example.com'])).toBe('--name: is required');
    expect(await fails(['user', 'create', '--email', 'x@example.com', '--name', 'X', '--password-stdin'], '')).toMatch(/^--password-stdin: standard input is empty/);
    expect(await fails(['user', 'create', '--email', 'x@example.com', '--name', 'X', '--password-stdin'], 'short\n')).toBe(
      '--password-stdin: the password must be at least 8 characters',
    );
    expect(await fails(['user', 'create', '--email', 'x@example.com', '--name', 'X', '--password-stdin=yes'], 'long enough\n')).toBe(
      '--password-stdin: takes no value',
    );
    const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM users WHERE email = 'x@example.com'`);
    expect(rows[0].n).toBe(0);
  });

  it('prints a one-time password that signs in, once', async () => {
    const out = await ok(['user', 'create', '--email', 'Ana@Example.com', '--name', 'Ana Lima']);
    expect(Object.keys(out).sort()).toEqual(['email', 'id', 'name', 'password']);
    expect(out).toMatchObject({ email: 'Ana@Example.com', name: 'Ana Lima' });
    expect(String(out.password)).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await verifyCredentials(db, 'ana@example.com', String(out.password))).toMatchObject({ id: out.id });
  });

  it('--password-stdin reads the first line; its newline (LF or CRLF) is not part of the password', async () => {
    const out = await ok(['user', 'create', '--email', 'piped@example.com', '--name', 'Piped', '--password-stdin'], 'my pass phrase \r\nignored\n');
    expect(out).not.toHaveProperty('password');
    expect(await verifyCredentials(db, 'piped@example.com', 'my pass phrase ')).toMatchObject({ id: out.id });
    expect(await verifyCredentials(db, 'piped@example.com', 'my pass phrase \r')).toBeNull();
  });

  it('as a real process, reads the password piped to it', async () => {
    const out = cliJson(await runCliProcess(['user', 'create', '--email', 'process@example.com', '--name', 'Proc', '--password-stdin'], env, 60_000, 'from a pipe 123\n'));
    expect(await verifyCredentials(db, 'process@example.com', 'from a pipe 123')).toMatchObject({ id: out.id });
  });
});

describe('user add', () => {
  it('refuses an unknown email, target or role, both or neither target, and a second membership', async () => {
    const ws = await createWorkspace(db, { name: 'CLI members' });
    await ok(['user', 'create', '--email', 'member@example.com', '--name', 'Member']);
    expect(await fails(['user', 'add', '--email', 'ghost@example.com', '--workspace', String(ws.id), '--role', 'owner'])).toBe(
      '--email: user ghost@example.com not found',
    );
    expect(await fails(['user', 'add', '--email', 'member@example.com', '--workspace', '999999', '--role', 'owner'])).toBe(
      '--workspace: workspace 999999 not found',
    );
    expect(await fails(['user', 'add', '--email', 'member@example.com', '--workspace', String(ws.id), '--role', 'admin'])).toBe(
      '--role: must be one of owner, member, viewer',
    );
    expect(await fails(['user', 'add', '--email', 'member@example.com', '--role', 'owner'])).toBe('give exactly one of --workspace or --publisher');
    expect(await fails(['user', 'add', '--email', 'member@example.com', '--workspace', String(ws.id), '--publisher', '1', '--role', 'owner'])).toBe(
      'give exactly one of --workspace or --publisher',
    );
    await ok(['user', 'add', '--email', 'member@example.com', '--workspace', String(ws.id), '--role', 'member']);
    expect(await fails(['user', 'add', '--email', 'MEMBER@example.com', '--workspace', String(ws.id), '--role', 'owner'])).toBe('--email: is already a member');
  });

  it('adds a user to a workspace and to a publisher with a role', async () => {
    const ws = await createWorkspace(db, { name: 'CLI owners' });
    const pub = await createPublisher(db, 'CLI publisher');
    const user = await ok(['user', 'create', '--email', 'owner@example.com', '--name', 'Owner']);
    expect(await ok(['user', 'add', '--email', 'OWNER@example.com', '--workspace', String(ws.id), '--role', 'owner'])).toEqual({
      user_id: user.id,
      email: 'owner@example.com',
      workspace_id: ws.id,
      role: 'owner',
    });
    expect(await ok(['user', 'add', '--email', 'owner@example.com', '--publisher', String(pub.id), '--role', 'viewer'])).toMatchObject({
      publisher_id: pub.id,
      role: 'viewer',
    });
    expect(await roleIn(db, Number(user.id), { workspaceId: ws.id })).toBe('owner');
    expect(await roleIn(db, Number(user.id), { publisherId: pub.id })).toBe('viewer');
  });
});

describe('user set-password', () => {
  it('refuses an unknown email and a short password, changing nothing', async () => {
    const user = await ok(['user', 'create', '--email', 'keep@example.com', '--name', 'Keep', '--password-stdin'], 'the old password\n');
    expect(await fails(['user', 'set-password', '--email', 'ghost@example.com'])).toBe('--email: user ghost@example.com not found');
    expect(await fails(['user', 'set-password', '--email', 'keep@example.com', '--password-stdin'], 'short\n')).toBe('--password-stdin: the password must be at least 8 characters');
    expect(await verifyCredentials(db, 'keep@example.com', 'the old password')).toMatchObject({ id: user.id });
  });

  it('sets a new password (printed, or from stdin) and ends every session', async () => {
    const user = await ok(['user', 'create', '--email', 'reset@example.com', '--name', 'Reset', '--password-stdin'], 'the old password\n');
    await database.pool.query(`INSERT INTO sessions (id_hash, user_id, expires_at) VALUES ('s1', $1, now() + interval '1 day'), ('s2', $1, now() + interval '1 day')`, [
      user.id,
    ]);
    const printed = await ok(['user', 'set-password', '--email', 'RESET@example.com']);
    expect(printed).toMatchObject({ id: user.id, email: 'reset@example.com', sessions_ended: 2 });
    expect(await verifyCredentials(db, 'reset@example.com', String(printed.password))).toMatchObject({ id: user.id });
    expect(await verifyCredentials(db, 'reset@example.com', 'the old password')).toBeNull();
    const piped = await ok(['user', 'set-password', '--email', 'reset@example.com', '--password-stdin'], 'brand new one\n');
    expect(piped).toEqual({ id: user.id, email: 'reset@example.com', sessions_ended: 0 });
    expect(await verifyCredentials(db, 'reset@example.com', 'brand new one')).toMatchObject({ id: user.id });
  });
});

describe('the first line of standard input', () => {
  const read = async (chunks: string[], end = true) => {
    const s = new PassThrough();
    const line = firstLine(s)();
    for (const c of chunks) s.write(c);
    if (end) s.end();
    return line;
  };
  it('stops at the first newline without waiting for the end; drops LF or CRLF; an empty input is empty', async () => {
    expect(await read(['pass', 'word\nrest'], false)).toBe('password');
    expect(await read(['pass\r\n'])).toBe('pass');
    expect(await read(['no newline'])).toBe('no newline');
    expect(await read([])).toBe('');
    await expect(read(['x'.repeat(5000)], false)).rejects.toThrow(/longer than 4096/);
  });
});

describe('user create --staff, user set-staff', () => {
  const staffOf = async (email: string) => (await db.query<{ is_staff: boolean }>('SELECT is_staff FROM users WHERE lower(email) = lower($1)', [email])).rows[0]?.is_staff;

  it('makes staff, and takes it away; being staff makes nobody a member', async () => {
    const made = await ok(['user', 'create', '--email', 'ops@example.com', '--name', 'Olu Ops', '--staff']);
    expect(made).toMatchObject({ email: 'ops@example.com', staff: true });
    expect(await staffOf('ops@example.com')).toBe(true);
    expect((await db.query('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [made.id])).rows[0].n).toBe(0);
    expect(await ok(['user', 'set-staff', '--email', 'OPS@example.com', '--staff', 'false'])).toEqual({ id: made.id, email: 'ops@example.com', staff: false });
    expect(await staffOf('ops@example.com')).toBe(false);
    expect(await ok(['user', 'set-staff', '--email', 'ops@example.com', '--staff', 'true'])).toMatchObject({ staff: true });
    expect(await staffOf('ops@example.com')).toBe(true);
    // Without --staff a new user is not staff.
    await ok(['user', 'create', '--email', 'plain@example.com', '--name', 'Plain']);
    expect(await staffOf('plain@example.com')).toBe(false);
  });

  it('refuses an unknown email, a value other than true or false, a missing --staff, and --staff with a value on create', async () => {
    expect(await fails(['user', 'set-staff', '--email', 'nobody@example.com', '--staff', 'true'])).toBe('--email: user nobody@example.com not found');
    await ok(['user', 'create', '--email', 'half@example.com', '--name', 'Half']);
    expect(await fails(['user', 'set-staff', '--email', 'half@example.com', '--staff', 'yes'])).toBe('--staff: must be true or false');
    expect(await fails(['user', 'set-staff', '--email', 'half@example.com'])).toBe('--staff: is required');
    expect(await fails(['user', 'set-staff', '--email', 'half@example.com', '--staff'])).toBe('--staff: must be true or false');
    expect(await fails(['user', 'create', '--email', 'v@example.com', '--name', 'V', '--staff=true'])).toBe('--staff: takes no value');
    expect(await staffOf('half@example.com')).toBe(false);
    expect(await staffOf('v@example.com')).toBeUndefined();
  });
});

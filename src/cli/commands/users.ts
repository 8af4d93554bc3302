import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { memberRoles } from '../../common/enums.js';
import { DomainError } from '../../domain/errors.js';
import { addMember } from '../../domain/users/memberships.js';
import { createUser, requireUserByEmail, setPassword, setStaff } from '../../domain/users/user-service.js';
import { CliError, flag, id, name, readFlags, str, trueOrFalse } from '../args.js';
import type { CliContext, Commands } from '../registry.js';

const email = str.max(254, 'must be at most 254 characters');

/** A password shown once: 24 characters of base64url (144 random bits). */
const oneTimePassword = () => randomBytes(18).toString('base64url');

/** The password from standard input's first line (`--password-stdin`), or a new one to print. */
async function passwordFor(ctx: CliContext, fromStdin: boolean | undefined): Promise<{ password: string; shown: boolean }> {
  if (!fromStdin) return { password: oneTimePassword(), shown: true };
  const line = await ctx.readLine();
  if (line === '') throw new CliError('--password-stdin: standard input is empty; give the password as its first line');
  return { password: line, shown: false };
}

/** A refused password read from stdin, named by the flag that brought it. */
async function withStdinPassword<T>(fromStdin: boolean | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const problems = err instanceof DomainError ? (err.details.errors as Record<string, string[]> | undefined)?.password : undefined;
    if (fromStdin && problems) throw new CliError(`--password-stdin: the password ${problems.join('; ')}`);
    throw err;
  }
}

export const userCommands: Commands = {
  'user create': async (ctx, raw) => {
    const f = readFlags(z.object({ email, name, 'password-stdin': flag, staff: flag }).strict(), raw);
    const { password, shown } = await passwordFor(ctx, f['password-stdin']);
    const user = await withStdinPassword(f['password-stdin'], () => createUser(ctx.db, { email: f.email, name: f.name, password, staff: Boolean(f.staff) }));
    return { id: user.id, email: user.email, name: user.name, ...(user.isStaff ? { staff: true } : {}), ...(shown ? { password } : {}) };
  },

  'user add': async ({ db }, raw) => {
    const f = readFlags(
      z.object({
        email,
        workspace: id.optional(),
        publisher: id.optional(),
        role: z.enum(memberRoles, { error: `must be one of ${memberRoles.join(', ')}` }),
      }).strict(),
      raw,
    );
    if ((f.workspace === undefined) === (f.publisher === undefined)) throw new CliError('give exactly one of --workspace or --publisher');
    const user = await requireUserByEmail(db, f.email);
    const target = f.workspace !== undefined ? { workspaceId: f.workspace } : { publisherId: f.publisher! };
    const member = await addMember(db, target, user.id, f.role);
    return { user_id: user.id, email: user.email, ...(f.workspace !== undefined ? { workspace_id: f.workspace } : { publisher_id: f.publisher }), role: member.role };
  },

  // The operator's staff see the operations console (docs/billing.md); being staff makes nobody a member of a workspace.
  'user set-staff': async ({ db }, raw) => {
    const f = readFlags(z.object({ email, staff: trueOrFalse }).strict(), raw);
    const user = await setStaff(db, (await requireUserByEmail(db, f.email)).id, f.staff);
    return { id: user.id, email: user.email, staff: user.isStaff };
  },

  'user set-password': async (ctx, raw) => {
    const f = readFlags(z.object({ email, 'password-stdin': flag }).strict(), raw);
    const user = await requireUserByEmail(ctx.db, f.email);
    const { password, shown } = await passwordFor(ctx, f['password-stdin']);
    const { sessionsEnded } = await withStdinPassword(f['password-stdin'], () => setPassword(ctx.db, user.id, password));
    return { id: user.id, email: user.email, sessions_ended: sessionsEnded, ...(shown ? { password } : {}) };
  },
};

import { createHash, randomBytes } from 'node:crypto';

// Tokens of links a person is given (invitations, address confirmations, password resets): 256
// random bits, shown or mailed once; only their SHA-256 is stored, so a leaked table or backup
// opens nothing.

export const newToken = () => randomBytes(32).toString('base64url');
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A token as a link brings it: anything else (missing, repeated, absurdly long) is no token. */
export const tokenShaped = (token: unknown): token is string => typeof token === 'string' && token.length > 0 && token.length <= 200;

import { randomInt } from 'node:crypto';

// Top-up references are typed by people into a bank's payment form and read back off a
// statement: short, upper case, in an alphabet without the letters and digits people confuse
// (0 and O, 1, I and L; U, which Crockford's base 32 leaves out too), in two groups of four. 30^8 ≈ 6.6 × 10^11 of them; the unique index on
// top_up_requests.reference refuses a repeat, and the writer draws again.
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUP = 4;

const group = () => Array.from({ length: GROUP }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

export const newTopUpReference = () => `TU-${group()}-${group()}`;
/** A payout's reference, the description its transfer carries; and a batch's, the file staff give the bank. */
export const newPayoutReference = () => `PO-${group()}-${group()}`;
export const newBatchReference = () => `PB-${group()}-${group()}`;

/**
 * A reference as typed (lower case, spaces, without its dashes) in the form it is stored in, or
 * null when it cannot be one: the operations console's search finds a request by it.
 */
export function normalReference(typed: string): string | null {
  const bare = typed.toUpperCase().replace(/[\s-]/g, '');
  const m = new RegExp(`^TU([${ALPHABET}]{${GROUP}})([${ALPHABET}]{${GROUP}})$`).exec(bare);
  return m ? `TU-${m[1]}-${m[2]}` : null;
}

import type { MemberRole } from '../common/enums.js';

// Who is signed in and where they may go: what the gate sets on a request (context.ts) and what
// every page's layout reads (view-models.ts).

/** A workspace or publisher account the signed-in person belongs to, as the console links it. */
export interface ConsoleTarget {
  kind: 'workspace' | 'publisher';
  id: number;
  name: string;
  role: MemberRole;
  href: string;
  kindLabel: string;
}

export interface SignedIn {
  id: number;
  name: string;
  email: string;
  /** Whether the person confirmed their address (docs/mail.md); until then EMAIL_VERIFICATION decides what they may do. */
  emailVerified: boolean;
  /** The operator's staff: the navigation's "Operations" and the pages under /app/ops (docs/billing.md). */
  staff: boolean;
}

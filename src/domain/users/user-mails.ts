import { type ComposedMail, composeMail } from '../mail/compose.js';
import type { MailSite } from '../mail/outbox.js';

// The words of the mails about a person's account (docs/mail.md). The mails that anyone can make
// the service send to any address (sign-up's confirmation, a password reset) carry no text the
// asker chose, not even their name: they cannot be turned into a message from us to a stranger.

/** An absolute console link carrying a token. */
export const consoleLink = (site: MailSite, path: string, token: string) => `${site.baseUrl}/app/${path}?token=${encodeURIComponent(token)}`;

export const ADDRESS_LINK_HOURS = 48;
export const RESET_LINK_MINUTES = 60;

export function addressConfirmationMail(email: string, link: string): ComposedMail {
  return composeMail({
    subject: 'Confirm your email address',
    greeting: 'Hello,',
    paragraphs: [`Someone, we hope you, signed up for the Marketplace console as ${email}. Confirm that this address is yours to start using the console.`],
    action: { label: 'Confirm your address', url: link },
    after: [
      `The link works once, for ${ADDRESS_LINK_HOURS} hours. Opened in a browser where you are not signed in, it asks for your password first.`,
      'If you did not sign up, do not confirm anything: ignore this mail. To take the address back, use "Forgot password?" on the sign-in page.',
    ],
  });
}

export function passwordResetMail(email: string, link: string): ComposedMail {
  return composeMail({
    subject: 'Reset your password',
    greeting: 'Hello,',
    paragraphs: [`Someone, we hope you, asked to set a new password for ${email} on the Marketplace console.`],
    action: { label: 'Set a new password', url: link },
    after: [
      `The link works once, for ${RESET_LINK_MINUTES} minutes. Setting a new password signs you out everywhere.`,
      'If you did not ask for it, ignore this mail: your password stays as it is.',
    ],
  });
}

export function invitationMail(invite: { email: string; inviter: string; kindLabel: string; targetName: string; role: string; expiresOn: string; link: string }): ComposedMail {
  return composeMail({
    subject: `${invite.inviter} invites you to ${invite.targetName}`,
    greeting: 'Hello,',
    paragraphs: [`${invite.inviter} invites ${invite.email} to the ${invite.kindLabel} ${invite.targetName} on the Marketplace console, as ${invite.role}.`],
    action: { label: 'Open the invitation', url: invite.link },
    after: [`The link works once, for this address only, until ${invite.expiresOn}.`, 'If you do not know why you got this, ignore this mail.'],
  });
}

export const INVITATION_PROOF_MINUTES = 60;

/** The link that finishes joining through an invitation: anyone holding the invite link can ask for it, so no word in it is theirs. */
export function invitationProofMail(email: string, link: string): ComposedMail {
  return composeMail({
    subject: 'Finish joining the Marketplace console',
    greeting: 'Hello,',
    paragraphs: [`Someone, we hope you, opened an invitation for ${email} on the Marketplace console and asked to join. Choose your name and password to finish.`],
    action: { label: 'Finish joining', url: link },
    after: [
      `The link works once, for ${INVITATION_PROOF_MINUTES} minutes. If ${email} already has an account that never confirmed its address, the password you choose replaces its password and signs it out everywhere.`,
      'If you did not ask for it, ignore this mail: nothing changes.',
    ],
  });
}

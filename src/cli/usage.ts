/** Each command's flags, as docs/cli.md lists them: `help` prints them all, `<command> --help` one. */
export const synopses: Record<string, string> = {
  'workspace create':
    'workspace create --name NAME [--currency USD] [--balance-cents N] [--owner-first-name F --owner-last-name L --owner-email E --username U] ' +
    '[--avatar-url URL] [--cover-url URL]',
  'workspace top-up': 'workspace top-up --workspace ID --cents N',
  'workspace rules': 'workspace rules --workspace ID [--max-order-cents N|none] [--approval-above-cents N|none] [--auto-approve-drafts true|false]',
  'key create':
    'key create --workspace ID [--name NAME] [--can-place-orders [--needs-approval] [--order-limit-usd USD] [--daily-limit-usd USD] [--monthly-limit-usd USD]] [--expires DATE]  |  key create --publisher ID [--name NAME] [--expires DATE]',
  'key update':
    'key update --id ID [--order-limit-usd USD|none] [--daily-limit-usd USD|none] [--monthly-limit-usd USD|none] [--expires DATE|none] [--needs-approval true|false]  (at least one)',
  'key revoke': 'key revoke --id ID',
  'project create': 'project create --workspace ID --name NAME',
  'brand-kit create':
    'brand-kit create --workspace ID --name NAME [--website URL] [--description D] [--tone T] [--anchor-text A ...]',
  'fx set': 'fx set --currency EUR --per-usd 0.92',
  'fx list': 'fx list',
  'publisher create': 'publisher create --name NAME',
  'outlets import': 'outlets import --publisher ID --file F.jsonl',
  'outlets generate': 'outlets generate --publisher ID --count N [--seed S]',
  'items import': 'items import --workspace ID --file F.json',
  'purchase create': 'purchase create --item ID [--license regular|extended] [--support-months N | --no-support]',
  'purchase generate': 'purchase generate --item ID --count N [--seed S]',
  'purchase download': 'purchase download --code CODE',
  'purchase refund': 'purchase refund --code CODE',
  'orders sweep': 'orders sweep',
  'orders check-links': 'orders check-links',
  'webhook create': 'webhook create (--workspace ID | --publisher ID) --url URL [--event TYPE ...]',
  'webhook list': 'webhook list (--workspace ID | --publisher ID)',
  'webhook delete': 'webhook delete --id ID',
  'webhook rotate-secret': 'webhook rotate-secret --id ID',
  'user create': 'user create --email EMAIL --name NAME [--password-stdin] [--staff]',
  'user add': 'user add --email EMAIL (--workspace ID | --publisher ID) --role owner|member|viewer',
  'user set-password': 'user set-password --email EMAIL [--password-stdin]',
  'user set-staff': 'user set-staff --email EMAIL --staff true|false',
};

export const HELP_WORDS = new Set(['help', '--help', '-h']);

export function helpText(): string {
  return [
    'usage: npm run -s admin -- <command> [--flags]',
    'JSON on stdout and exit 0; bad input: one line on stderr and exit 1. `<command> --help` shows one command.',
    '',
    ...Object.keys(synopses)
      .sort()
      .map((name) => `  ${synopses[name]}`),
    '',
  ].join('\n');
}

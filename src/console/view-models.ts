import type { ApprovalRequestView } from '../domain/approvals/approval-view.js';
import type { AdjustmentLine, PublisherBalances, WorkspaceBalances } from '../domain/billing/operations.js';
import type { PayoutView } from '../domain/billing/payout-view.js';
import type { TopUpView } from '../domain/billing/top-up-view.js';
import type { FieldErrors } from '../domain/errors.js';
import type { KeyDetail } from '../domain/keys/key-detail.js';
import type { KeyListing } from '../domain/keys/key-service.js';
import type { ConsentRequest } from '../domain/oauth/interactions.js';
import type { ContentCheck } from '../domain/orders/content-checks.js';
import type { BuyerOrderView, PublisherOrderView } from '../domain/orders/order-view.js';
import type { PlaceOrdersInput } from '../domain/orders/placement-rules.js';
import type { getOutlet } from '../domain/outlets/outlet-detail.js';
import type { Statement } from '../domain/ledger/statements.js';
import type { DeliveryView, EndpointView } from '../domain/webhooks/endpoints.js';
import type { EventType } from '../domain/events/event-types.js';
import type { UnsubscribeSubject } from '../domain/notifications/preferences.js';
import type { OrderStatus } from '../domain/orders/states.js';
import type { ApprovalStatus, MemberRole } from '../common/enums.js';
import type { BarChart, TimelineChart } from './charts.js';
import type { ConsoleTarget, SignedIn } from './signed-in.js';
import type * as fmt from './format.js';
import type { Moment } from './format.js';
import type { filterFields } from './outlet-filters.js';
import type { BudgetFormValues, budgetRows } from './pages/key-budget-form.js';

// The data of every console view (src/console/views/*.eta), one type per view: `page()` takes a
// view's name and that view's model, so a page that misspells or forgets a field fails `tsc`; and
// test/console/view-models.test.ts reads each template's `it.…` fields and checks them against
// these names, so a template that reads a field its model lacks fails that test. Adding a view:
// its model here, under its name in `Views` (a page), `Partials` or `Documents`.

/** What `page()` adds to every page's data: the layout and the partials read it. */
export interface PageCommon {
  csrf: string;
  user: SignedIn | null;
  memberships: ConsoleTarget[];
  target: ConsoleTarget | null;
  pendingApprovals: number | null;
  /** A form's values as sent, shown again with its errors; a page that has a form gives its own. */
  form: object;
  errors: FieldErrors;
  fmt: typeof fmt;
}

/** What a page tells the layout (layout.eta): its title, where it is in the navigation. */
export interface LayoutFields {
  title: string;
  section?: string;
  /** Hides the layout's "your address is not confirmed" line, on the pages about that address. */
  noAddressBanner?: boolean;
}

/** A page's notice (what was done) and problem (what was refused): messages.eta. */
export interface Messages {
  notice?: string | undefined;
  problem?: string | undefined;
}

/** A page with a form: the values as sent and what is wrong with them, shown again after a refusal. */
export interface FormErrors {
  errors?: FieldErrors;
}

/** A row of label and value ("Price", "$120.00"). */
export interface Figure {
  label: string;
  value: string;
}

/** A list's paging: page n of pages, and the links before and after. */
export interface Paging {
  pageNo: number;
  pages: number;
  prev: string | null;
  next: string | null;
}

/** `{ ...T, ...U }` of each member of a union. */
type With<T, U> = T extends unknown ? Omit<T, keyof U> & U : never;

type Outlet = Awaited<ReturnType<typeof getOutlet>>;
type Offer = Outlet['offers'][number];
type AnyOrder = BuyerOrderView | PublisherOrderView;

// ---- Partials: what an `include` hands them (with the including page's fields underneath) ----

export interface FieldModel {
  name: string;
  label: string;
  type?: string;
  value?: string | undefined;
  autocomplete?: string;
  required?: boolean;
  hint?: string;
  /** Attributes written as they are (`inputmode="decimal"`), never from input. */
  attrs?: string;
  errors: FieldErrors;
}

export interface OrderFieldModel {
  /** The order page's form this field belongs to, and the form that failed, to show its values and errors. */
  form: string;
  failed: OrderFailed;
  name: string;
  label: string;
  type?: string;
  value?: string | undefined;
  textarea?: boolean;
  rows?: number;
  hint?: string;
}

export interface OrderFailed {
  form: string;
  values: Record<string, string>;
  errors: Record<string, string[]>;
}

export interface BudgetFieldsModel {
  form: Partial<BudgetFormValues>;
  errors: FieldErrors;
}

export interface Partials {
  field: FieldModel;
  'order-field': OrderFieldModel;
  'budget-fields': BudgetFieldsModel;
  messages: Messages;
  'bar-chart': BarChart;
  timeline: { chart: TimelineChart; rows: { label: string; at: Moment }[] };
}

// ---- Shared rows -------------------------------------------------------------------------------

export interface ApprovalRow {
  id: number;
  href: string;
  status: string;
  what: string;
  action: string;
  total: string;
  askedBy: string;
  end: { label: string; at: Moment };
  expires: Moment;
}

/** An order as a row of a table (the overview's, the orders desk's). */
export interface OrderLine {
  id: number;
  href: string;
  status: string;
  turn: string;
  outlet: string;
}

export interface OpsTopUpRow {
  href: string;
  reference: string;
  status: string;
  workspace: string;
  workspaceHref: string;
  amount: string;
  received: string;
  requested: string;
  by: string;
  decidedBy: string;
}

export interface OpsPayoutRow {
  href: string;
  reference: string;
  status: string;
  publisher: string;
  publisherHref: string;
  amount: string;
  destination: string;
  requested: string;
  batch: string | null;
  batchHref: string | null;
  decidedBy: string;
}

// ---- Pages -------------------------------------------------------------------------------------

export interface Views {
  error: LayoutFields & { heading: string; message: string };
  'no-target': LayoutFields;
  settings: LayoutFields;

  // Signing in, and the pages of the links mailed to a person.
  'sign-in': LayoutFields & Messages & FormErrors & { signupOpen: boolean; next: string; form?: { email?: string } };
  'sign-up': LayoutFields & Messages & FormErrors & { invitation?: string; form?: { name?: string; email?: string } };
  'check-email': LayoutFields & Messages & { required: boolean; hours: number };
  'verify-email': LayoutFields & Messages & FormErrors & { token: string; email: string; mode: string };
  'forgot-password': LayoutFields & Messages & FormErrors & { minutes: number; sent?: string; form?: { email?: string } };
  'reset-password': LayoutFields & Messages & FormErrors & { token: string; email: string };
  invitation: LayoutFields &
    Messages &
    FormErrors & {
      invitation: { kindLabel: string; email: string; role: MemberRole; kind: 'workspace' | 'publisher'; targetId: number; targetName: string; invitedBy: string; expiresAt: Date; state: 'pending' | 'expired' | 'accepted' };
      token: string;
      mode: string;
      proof?: string | undefined;
      form?: { name: string } | undefined;
    };
  'invitation-mailed': LayoutFields & Messages & { email: string; minutes: number };
  'oauth-consent': LayoutFields &
    Messages &
    FormErrors & {
      consent: ConsentRequest;
      workspaces: ConsoleTarget[];
      showSpending: boolean;
      action: string;
      /** The form as sent, every field as the body had it (a refusal shows it again). */
      form: Record<string, unknown>;
    };
  unsubscribe: LayoutFields & { done?: boolean; subject?: UnsubscribeSubject; action?: string };

  // A workspace's or publisher account's pages.
  overview: LayoutFields &
    Messages & {
      figures: Figure[];
      moneyLabel: string;
      spending: BarChart | null;
      orders: (OrderLine & { price: string; deadline: Moment })[];
      ordersTotal: number;
      recent: (OrderLine & { price: string; deadline: Moment })[];
      recentTotal: number;
      events: { created_at: Moment; type: string; link: { href: string; label: string } | null }[];
      needing: { created_at: Moment; type: string; action: string; order: number; href: string }[];
      approvals: ApprovalRow[];
      approvalsTotal: number;
    };
  orders: LayoutFields &
    Messages &
    Paging & {
      heading: string;
      figures: Figure[];
      payouts: BarChart | null;
      statuses: { value: OrderStatus; label: string; selected: boolean }[];
      status: string;
      mine: (OrderLine & { money: string; deadline: Moment; updated: Moment })[];
      mineTotal: number;
      rest: (OrderLine & { money: string; deadline: Moment; updated: Moment })[];
      restTotal: number;
      moneyLabel: string;
      placeHref: string | null;
      csvHref: string;
    };
  order: LayoutFields &
    Messages & {
      buyer: boolean;
      base: string;
      back: string;
      order: With<
        AnyOrder,
        {
          statusLabel: string;
          turnLabel: string;
          money: string;
          created: Moment;
          deadlines: { label: string | undefined; at: Moment }[];
          live_checked: Moment;
          guarantee_ends: Moment;
          messages: (NonNullable<AnyOrder['messages']>[number] & { at: Moment; from: string })[];
        }
      >;
      content: (Omit<NonNullable<AnyOrder['content']>, 'submitted_at'> & { submitted_at: Moment; by: string; html: string }) | null;
      figures: Figure[];
      timeline: Partials['timeline'];
      approval: { by: string; at: Moment; href: string; requestId: number } | null;
      actions: Record<'accept' | 'decline' | 'draft' | 'publish' | 'recheck' | 'content' | 'approveDraft' | 'approve' | 'maySpend' | 'cancel' | 'message', boolean>;
      failed: OrderFailed;
      preview: { form: string; values: { title: string; body: string }; html: string } | null;
      writing: {
        rules: { min_words: string; max_words: string; title: { readonly min: number; readonly max: number }; target_url: string; anchor_text: string | null; max_links: number };
        checks: ContentCheck[] | null;
      } | null;
    };
  'order-confirm': LayoutFields & { heading: string; lines: string[]; figures: Figure[]; action: string; button: string; danger: boolean; back: string };
  outlets: LayoutFields &
    Messages &
    Partial<Paging> & {
      fields: ReturnType<typeof filterFields>;
      filtered: boolean;
      searched: boolean;
      maySpend: boolean;
      q?: string;
      total?: number;
      outlets?: { href: string; name: string; domain: string; country: string; topics: string; from: string; visits: string; verified: boolean }[];
    };
  outlet: LayoutFields & { outlet: Outlet; record: Figure[]; back: string; offers: (Offer & { href: string })[]; maySpend: boolean };
  'order-new': LayoutFields &
    Messages & {
      outlet: Outlet;
      offer: Offer;
      action: string;
      back: string;
      values: Record<string, string>;
      errors: FieldErrors;
      titleLength: { readonly min: number; readonly max: number };
      preview: { title: string; html: string; checks: ContentCheck[] } | null;
    };
  'order-place': LayoutFields & {
    heading: string;
    offer: Offer;
    outlet: Outlet;
    input: PlaceOrdersInput;
    figures: Figure[];
    short: boolean;
    values: Record<string, string>;
    idempotencyKey: string;
    quotedCents: number;
    action: string;
    edit: string;
  };
  approvals: LayoutFields &
    Messages &
    Paging & {
      statuses: { value: ApprovalStatus; label: string; selected: boolean }[];
      status: string;
      rows: ApprovalRow[];
      total: number;
      maySpend: boolean;
    };
  approval: LayoutFields &
    Messages & {
      heading: string;
      back: string;
      base: string;
      request: With<
        ApprovalRequestView,
        {
          statusWords: string;
          actionWords: string;
          askedBy: string;
          requested: Moment;
          expires: Moment;
          decided: Moment;
          items: (ApprovalRequestView['items'][number] & { formatWords: string; orderHref: string | null })[];
          orders: { id: number; href: string }[];
        }
      >;
      pending: boolean;
      placing: boolean;
      figures: Figure[];
      short: boolean;
      mayDecide: boolean;
      approveKey: string;
      declineKey: string;
      reason: string;
      reasonErrors: string[];
      maxReason: number;
    };
  funds: LayoutFields &
    Messages &
    Paging & {
      balance: string;
      held: string;
      mayAdd: boolean;
      provider: string;
      limits: string;
      amount: string;
      errors: FieldErrors;
      idempotencyKey: string;
      rows: { href: string; reference: string; status: string; amount: string; received: string; requested: string; by: string }[];
    };
  'top-up': LayoutFields &
    Messages & {
      back: string;
      base: string;
      topUp: TopUpView & { statusWords: string; by: string; requested: string; decided: string; differs: boolean };
      pending: boolean;
      mayCancel: boolean;
    };
  statements: LayoutFields & { current: string | undefined; months: { month: string; words: string; href: string }[]; downloads: { href: string; label: string }[] };
  payouts: LayoutFields &
    Messages &
    Paging & {
      balances: { payable: number; payable_formatted: string; in_payout: number; in_payout_formatted: string; minimum_cents: number; minimum_formatted: string };
      destination: { updated: string; method: 'bank' | 'paypal'; masked: string; updated_by: { id: number; name: string }; updated_at: string } | null;
      mayManage: boolean;
      mayRequest: boolean;
      editing: boolean;
      form: Record<string, string>;
      errors: FieldErrors;
      idempotencyKey: string;
      rows: { href: string; reference: string; status: string; amount: string; destination: string; requested: string }[];
    };
  payout: LayoutFields & Messages & { back: string; payout: PayoutView & { statusWords: string; requested: string; decided: string } };

  // Settings.
  keys: LayoutFields &
    Messages &
    FormErrors & {
      heading: string;
      intro: string;
      createHeading: string;
      createButton: string;
      split: { text: string; link: string; href: string; after: string } | undefined;
      base: string;
      keys: { id: number; name: string; prefix: string; canPlaceOrders: boolean; created: Moment; lastUsed: Moment; expires: Moment; state: string; budget: string; actions: boolean; href: string }[];
      showSpending: boolean;
      showSpendingBox: boolean;
      confirmToSpend: boolean;
      mayCreate: boolean;
      askExpiry: boolean;
      showBudget: boolean;
      showApproval: boolean;
      form?: Partial<BudgetFormValues> & { name?: string; can_place_orders?: boolean; needs_approval?: boolean };
    };
  'key-shown': LayoutFields & {
    heading: string;
    created: { name: string; id: number; key: string; prefix: string };
    facts: { canPlaceOrders: boolean; budget: string; needsApproval: boolean; expires: string };
    agent: { oauthUrl: string; oauthLocal: boolean; config: string; lines: number } | { oauthOff: string; config: string; lines: number } | undefined;
    keyHref: string;
    curl: string;
    /** A rolled key's page: until when the old key works. */
    rolled?: string;
    back: string;
    backLabel: string;
  };
  key: LayoutFields &
    Messages & {
      key: KeyDetail & { created: Moment; lastUsed: Moment; expires: Moment; stateLabel: string };
      rows: ReturnType<typeof budgetRows>;
      spending: BarChart | null;
      manage: boolean;
      limitFields: boolean;
      approvalForm: boolean;
      approvalAction: string;
      needsApproval: boolean;
      revokeHref: string;
      rollHref: string;
      back: string;
      backLabel: string;
      action: string;
      form: BudgetFormValues;
      errors: FieldErrors;
    };
  'key-revoke': LayoutFields & { key: KeyListing; back: string; action: string };
  'key-roll': LayoutFields & Messages & FormErrors & { key: KeyListing; back: string; action: string; form: { grace_hours: string } };
  'approval-rules': LayoutFields &
    Messages &
    FormErrors & {
      action: string;
      manage: boolean;
      current: { max: string; above: string; auto: string };
      form: { max_order: string; approval_above: string; auto_approve_drafts: boolean };
    };
  webhooks: LayoutFields &
    Messages &
    FormErrors & {
      base: string;
      manage: boolean;
      eventTypes: { value: EventType; words: string }[];
      endpoints: (Omit<EndpointView, 'events'> & { events: { value: EventType; words: string }[] | null; created: Moment; disabled: Moment })[];
      chosen: string[];
      form?: { url?: string };
    };
  'webhook-secret': LayoutFields & { heading: string; endpoint: { id: number; url: string; secret: string }; note: string; back: string };
  'webhook-confirm': LayoutFields & { action: 'delete' | 'rotate'; endpoint: EndpointView; post: string; back: string };
  'webhook-deliveries': LayoutFields &
    Messages & {
      endpoint: EndpointView;
      here: string;
      back: string;
      manage: boolean;
      deliveries: (DeliveryView & { words: string; created: Moment; last: Moment })[];
      total: number;
      previous: string;
      next: string;
    };
  members: LayoutFields &
    Messages &
    FormErrors & {
      base: string;
      manage: boolean;
      roles: readonly MemberRole[];
      roleHelp: string;
      members: { since: Moment; you: boolean; userId: number; email: string; name: string; role: MemberRole }[];
      invitations: { expires: Moment; id: number; email: string; role: MemberRole; invitedBy: string; createdAt: Date; expiresAt: Date }[];
      form?: { email?: string; role?: string };
    };
  'invite-link': LayoutFields & { invitation: { email: string; role: MemberRole; expires: string; mailed: boolean }; link: string; back: string };
  'member-remove': LayoutFields & {
    member: { userId: number; name: string; email: string; role: MemberRole };
    you: boolean;
    apps: boolean;
    keys: { name: string; prefix: string; spends: boolean; created: Moment }[];
    back: string;
    action: string;
  };
  'connected-apps': LayoutFields &
    Messages & {
      base: string;
      oauth: { url: string; off?: undefined } | { off: string; url?: undefined };
      grants: { id: number; client: string; clientId: string; grantedBy: string; scope: string; budget: string; created: Moment; lastUsed: Moment; expires: Moment; state: string; revocable: boolean }[];
    };
  'connected-app-revoke': LayoutFields & { grant: { name: string; clientId: string }; back: string; action: string };
  notifications: LayoutFields &
    Messages &
    FormErrors & {
      action: string;
      email: string;
      verified: boolean;
      digestHour: string;
      modes: { value: string; label: string }[];
      kinds: { kind: string; label: string; help: string; mode: string; defaultMode: string; defaultLabel: string }[];
    };

  // The operator's staff.
  ops: LayoutFields &
    Messages & {
      q: string;
      searched: boolean;
      found: {
        workspaces: { href: string; id: number; name: string; currency: string; available: number; available_formatted: string; held: number; held_formatted: string }[];
        publishers: { href: string; id: number; name: string; pending: number; pending_formatted: string; payable: number; payable_formatted: string; in_payout: number; in_payout_formatted: string }[];
        topUp: OpsTopUpRow | null;
      };
      queue: OpsTopUpRow[];
      payouts: OpsPayoutRow[];
      unbatched: boolean;
      actions: { at: string; who: string; what: string; workspace: string; workspaceHref: string; amount: string; topUp: { reference: string; href: string } | null; reason: string }[];
    };
  'ops-top-up': LayoutFields &
    Messages & {
      topUp: OpsTopUpRow & { instructions: string; ledgerTransaction: number | null; rejectReason: string | null };
      base: string;
      pending: boolean;
      received: string;
      reason: string;
      errors: FieldErrors;
    };
  'ops-workspace': LayoutFields &
    Messages & {
      workspace: WorkspaceBalances;
      base: string;
      topUps: OpsTopUpRow[];
      adjustments: (AdjustmentLine & { at: string })[];
      form: Record<string, string>;
      errors: FieldErrors;
      idempotencyKey: string;
    };
  'ops-publisher': LayoutFields & { publisher: PublisherBalances };
  'ops-payout': LayoutFields &
    Messages & {
      payout: OpsPayoutRow & { sentReference: string | null; failureReason: string | null; ledgerTransaction: number; decidedLedgerTransaction: number | null };
      base: string;
      pending: boolean;
      form: Record<string, string>;
      errors: FieldErrors;
    };
  'ops-payout-batch': LayoutFields &
    Messages & {
      batch: string;
      base: string;
      rows: OpsPayoutRow[];
      pendingCount: number;
      bankReference: string;
      errors: FieldErrors;
    };
}

/** A view's name: each a template rendered in the layout, with `PageCommon` underneath. */
export type ViewName = keyof Views;

/**
 * What a page's template gets: `PageCommon`, and the page's own model over it. What `page()` gives
 * a default for (`form`, `errors`) is there whether or not the page gives its own.
 */
export type PageModel<V extends ViewName> = Omit<PageCommon, keyof Views[V]> & Omit<Views[V], keyof PageCommon> & Required<Pick<Views[V], keyof Views[V] & keyof PageCommon>>;

/** Every page's template data, by name (the template test reads these). */
export type PageModels = { [V in ViewName]: PageModel<V> };

/** What layout.eta gets: any page's data, and the page's HTML as `body`. */
export type LayoutModel = PageCommon & LayoutFields & Messages & { body: string };

// ---- Documents: printable pages of their own, without the layout -------------------------------

export interface Documents {
  invoice: {
    topUp: TopUpView;
    workspace: { id: number; name: string };
    issued: string;
    paid: { amount: string | null; on: string } | null;
    void: boolean;
    statusWords: string;
    provider: string;
    back: string;
  };
  statement: {
    s: Statement;
    title: string;
    period: string;
    ownerWords: string;
    accounts: (Statement['accounts'][number] & {
      words: string;
      movements: (Statement['accounts'][number]['movements'][number] & { day: string; kindWords: string })[];
    })[];
    back: string;
  };
}

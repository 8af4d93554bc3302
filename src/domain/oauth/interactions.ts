import type { IncomingMessage, ServerResponse } from 'node:http';

/** One authorization request waiting for the person's answer, as the consent page shows it. */
export interface ConsentRequest {
  uid: string;
  clientId: string;
  clientName: string;
  /** Where the client's description came from: its own metadata document (at its id), or dynamic registration here. */
  clientSource: 'metadata_document' | 'registration';
  /** The validated redirect URI's origin (or scheme, for an app's own scheme): the consent form may send the browser there. */
  redirectTarget: string;
  /** The client asked for `spend`. */
  wantsSpend: boolean;
  /** Where the browser goes once the request is answered: the authorization endpoint, which sends it on to the client. */
  returnTo: string;
}

/** What the console's consent page needs of the OAuth server. */
export interface OAuthInteractions {
  consentRequest(req: IncomingMessage, res: ServerResponse, uid: string): Promise<ConsentRequest>;
  /** Saves the grant of an Allow; answers its id (recorded as a principal before `finish`). */
  saveGrant(req: IncomingMessage, res: ServerResponse, uid: string, userId: number, spend: boolean): Promise<string>;
  /** Where to send the browser once the grant is recorded: back through the authorization endpoint. */
  finish(req: IncomingMessage, res: ServerResponse, uid: string, userId: number, grantId: string): Promise<string>;
  deny(req: IncomingMessage, res: ServerResponse, uid: string): Promise<string>;
}

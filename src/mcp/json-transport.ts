import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * A request among messages the SDK's message schema has accepted: it has a method and an id (a
 * notification has no id, a response no method). The SDK's own guard parses it again with zod.
 */
export const isRequest = (message: JSONRPCMessage): message is JSONRPCRequest => 'method' in message && 'id' in message;

/** A reply to one request, carrying the id its client sent. */
export type JsonRpcReply = JSONRPCResultResponse | JSONRPCErrorResponse;

/**
 * The SDK's `Transport` for one JSON request → one JSON reply, shared by every HTTP request:
 * one server is connected to it once, at boot, and each HTTP request hands it its messages with
 * `exchange`, getting its replies back as plain objects (no web Request, Response or stream).
 *
 * Clients number their requests independently, so ids collide between HTTP requests. Each
 * request therefore reaches the server under an id of this transport's own, unique while it
 * runs, and its reply is matched by that id and given the client's id back: a reply, a tool's
 * error or a slow tool stays with the HTTP request that sent it.
 */
export class JsonTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];

  private nextId = 0;
  private readonly pending = new Map<number, { clientId: RequestId; settle: (reply: JsonRpcReply) => void }>();

  async start(): Promise<void> {}

  /** Requests still running are answered as cut off, so no HTTP request waits on a closed server. */
  async close(): Promise<void> {
    for (const [id, { clientId, settle }] of this.pending) {
      this.pending.delete(id);
      settle({ jsonrpc: '2.0', id: clientId, error: { code: ErrorCode.ConnectionClosed, message: 'Connection closed' } });
    }
    this.onclose?.();
  }

  /**
   * Replies are settled by their id. Anything else the server sends (a notification, a request
   * to the client) has nowhere to go: a stateless exchange has no stream back to the client, and
   * this server sends none.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    // Told apart by their members, as the server wrote them: the SDK's type guards parse the
    // message with zod, and a failed parse (an Error with its stack) costs more than a reply.
    if (!('result' in message) && !('error' in message)) return;
    const id = message.id as number;
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    waiting.settle({ ...message, id: waiting.clientId });
  }

  /**
   * Hands one HTTP request's messages to the server and resolves with the replies to its
   * requests, in the order the requests came. Notifications go to the server and get no reply,
   * except `notifications/cancelled`: it names a request by the client's id, which on this
   * shared connection could be another client's request. Responses are dropped: the server
   * sends no requests, so none is awaited.
   */
  exchange(messages: readonly JSONRPCMessage[], authInfo: AuthInfo): Promise<JsonRpcReply[]> {
    const onmessage = this.onmessage;
    if (!onmessage) return Promise.reject(new Error('The MCP server is not connected.'));
    const replies: Promise<JsonRpcReply>[] = [];
    const extra = { authInfo };
    for (const message of messages) {
      if (isRequest(message)) {
        const id = this.nextId++;
        replies.push(new Promise((settle) => this.pending.set(id, { clientId: message.id, settle })));
        onmessage({ ...message, id } satisfies JSONRPCRequest, extra);
      } else if ('method' in message && message.method !== 'notifications/cancelled') {
        onmessage(message, extra);
      }
    }
    return Promise.all(replies);
  }
}

/** The two sides of an order: the buyer's workspace and the publisher. */
export type Party = 'buyer' | 'publisher';

/** Who is looking at orders or events: a workspace (the buyer's side) or a publisher. */
export type Viewer = { party: 'buyer'; workspaceId: number } | { party: 'publisher'; publisherId: number };

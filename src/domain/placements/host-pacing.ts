/**
 * At most `perSecond` requests to one host a second from this process, in the order asked. The
 * link checker paces every host it fetches, each redirect's too, so pages that redirect elsewhere
 * cannot send that host more than its share.
 */
export class HostPacing {
  private readonly next = new Map<string, number>();
  constructor(private readonly perSecond: number) {}

  async wait(host: string): Promise<void> {
    const key = host.toLowerCase().replace(/\.$/, '');
    const now = Date.now();
    const at = Math.max(now, this.next.get(key) ?? 0);
    this.next.set(key, at + 1000 / this.perSecond);
    if (this.next.size > 10_000) this.forgetPast(now);
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }

  private forgetPast(now: number): void {
    for (const [host, at] of this.next) if (at <= now) this.next.delete(host);
  }
}

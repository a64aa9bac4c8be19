/** A bound on things held at once (SSH channels of one connection): `acquire` waits for a free slot. */
export class ChannelLimit {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {}

  async acquire(): Promise<() => void> {
    if (this.held >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.held--;
    };
  }

  /** How many are held now. */
  get inUse(): number {
    return this.held;
  }
}

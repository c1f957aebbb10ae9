// One stitchcuda/* notification as a languageclient feature: parsed at the edge (a bad
// payload is logged, never thrown into the client), then handed to a typed handler.

import type { ClientCapabilities, FeatureState, StaticFeature } from 'vscode-languageclient';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PayloadError } from '../model/protocol';

export interface Disposable { dispose(): unknown }

export class NotificationFeature<T> implements StaticFeature {
  private registration: Disposable | undefined;

  constructor(
    private readonly client: LanguageClient,
    private readonly method: string,
    private readonly parse: (params: unknown) => T,
    private readonly handle: (value: T) => void,
    private readonly warn: (message: string) => void,
  ) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    // Tell the host which stitchcuda/* notifications this client shows.
    const experimental = (capabilities.experimental ??= {}) as Record<string, unknown>;
    const ours = (experimental.stitchcuda ??= { notifications: [] as string[] }) as { notifications: string[] };
    if (!ours.notifications.includes(this.method)) ours.notifications.push(this.method);
  }

  initialize(): void {
    this.registration?.dispose();
    this.registration = this.client.onNotification(this.method, (params: unknown) => {
      let value: T;
      try {
        value = this.parse(params);
      } catch (e) {
        const why = e instanceof PayloadError ? e.message : String(e);
        this.warn(`ignored a malformed ${this.method} notification: ${why}`);
        return;
      }
      this.handle(value);
    });
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {
    this.registration?.dispose();
    this.registration = undefined;
  }
}

/** The abstraction of one window: a sorted feature set and its hash id. */
export interface State {
  readonly id: string;
  readonly features: readonly string[];
}

/**
 * A mined log template's event type (`L7`) is numbered per run, in the order the run first saw
 * each template: two runs give one line two numbers. Across runs a template is named by its text.
 */
const TEMPLATE_ID = /(^|[:> ])(L\d+)(?=$|[ />])/g;

/** The name a template goes by across runs: its tokens, as the log line reads. */
export function templateText(tokens: readonly string[]): string {
  return `log[${tokens.join(' ')}]`;
}

/**
 * A state feature (`p:L3>L7`, `n:L3`) with each template id in it renamed as `names` says (to its
 * text, or to another run's id for it); ids `names` does not have are left as they are.
 */
export function renameTemplateIds(feature: string, names: ReadonlyMap<string, string>): string {
  return feature.replace(TEMPLATE_ID, (whole, before: string, id: string) => {
    const name = names.get(id);
    return name === undefined ? whole : `${before}${name}`;
  });
}

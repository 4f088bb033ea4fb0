/** What a tool call returns to the model: `ok: false` is a tool error. */
export interface ToolAnswer {
  ok: boolean;
  text: string;
}

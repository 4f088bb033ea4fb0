/** One inline keyboard button as the gateway's cores plan it: a label and its callback data. */
export interface InlineButton {
  text: string;
  callback_data: string;
}

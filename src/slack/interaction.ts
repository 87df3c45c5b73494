import * as z from "zod";
import { SLACK_USER } from "../engine/slack/target";
import { MAX_ACTION_VALUE } from "./action-value";
import { SLACK_ACTIONS } from "./approval-message";

/** The modals edgework opens, by `callback_id`, and the one input block each reads. */
export const SLACK_VIEWS = { edit: "edgework_edit", answer: "edgework_answer" } as const;
export const INPUT_BLOCK = "edgework_input";
export const INPUT_ACTION = "value";

const userId = z.string().regex(SLACK_USER);
const channelId = z.string().regex(/^[A-Z0-9]{1,40}$/);
const messageTs = z.string().regex(/^[0-9]{1,12}\.[0-9]{1,8}$/);

/** A button press on an approval message (Slack's block_actions payload, what edgework reads of it). */
const blockActions = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: userId }),
  trigger_id: z.string().max(200).optional(),
  container: z.object({ channel_id: channelId, message_ts: messageTs }),
  actions: z.array(z.object({ action_id: z.enum(SLACK_ACTIONS), value: z.string().max(MAX_ACTION_VALUE) })).length(1),
});

/** A modal submitted (edit, answer): its private_metadata is what the press carried, plus the message it came from. */
const viewSubmission = z.object({
  type: z.literal("view_submission"),
  user: z.object({ id: userId }),
  view: z.object({
    callback_id: z.enum([SLACK_VIEWS.edit, SLACK_VIEWS.answer]),
    private_metadata: z.string().max(3000),
    state: z.object({
      values: z.object({ [INPUT_BLOCK]: z.object({ [INPUT_ACTION]: z.object({ value: z.string().max(80_000).nullable().optional() }) }) }),
    }),
  }),
});

export const slackInteraction = z.discriminatedUnion("type", [blockActions, viewSubmission]);
export type SlackInteraction = z.infer<typeof slackInteraction>;

/** What a modal remembers of its press: the signed value and the message to update. */
export const modalMetadata = z.object({ value: z.string().max(MAX_ACTION_VALUE), channel: channelId, ts: messageTs });

import { z } from 'zod';

/**
 * The calling service's resources (spec section 2) as zod schemas. What the service sends back is read leniently:
 * the spec shows which fields exist but not which are required, nor the identifier fields of several resources
 * (sections 2.1, 2.4, 2.7), so every response field is optional and unknown fields are kept. Request bodies the
 * spec marks required (inbound assistant, segment) are checked before they are sent.
 */

const str = z.string().optional();
const bool = z.boolean().optional();
const num = z.number().optional();
/** An identifier the spec types as a string; some deployments send numbers or Mongo-style `_id`s. */
const id = z.union([z.string(), z.number()]).optional();

export const errorObjectSchema = z.looseObject({ error: z.number().int(), message: z.string() });

export const sentimentSchema = z.looseObject({
  general_prompt: str,
  positive_prompt: str,
  negative_prompt: str,
  neutral_prompt: str,
});

export const actionSchema = z.looseObject({
  type: str,
  meetingType: str,
  timezone: str,
  startDate: str,
  startTime: str,
  endTime: str,
  bookingDays: str,
  description: str,
  say: str,
  prompt: str,
  length: num,
  sms: z.looseObject({}).optional(),
  whatsapp: z.looseObject({}).optional(),
  tplmsg: z.looseObject({}).optional(),
});

/** Section 2.3. */
export const voiceDataSchema = z.looseObject({
  voice_id: str,
  name: str,
  category: str,
  preview_url: str,
  reference_text: str,
  source: str,
  id: str,
  displayname: str,
  ai_modal: str,
  language: str,
  language_name: str,
  is_native: bool,
  categories: z.array(z.string()).optional(),
  labels: z.looseObject({ language: str, language_name: str, gender: str, accent: str }).optional(),
  similarity: num,
  stability: num,
});

/** Section 2.1: request body of creation and element of the list. Which fields creation requires is not shown. */
export const assistantSchema = z.looseObject({
  id,
  _id: id,
  type: z.enum(['inbound', 'outbound']).or(z.string()).optional(),
  language: str,
  name: str,
  company_name: str,
  accent: str,
  goal: str,
  start_speech: str,
  voice_id: str,
  voice_name: str,
  script: str,
  maximum_time_per_call: num,
  is_voice_note: bool,
  voice_note: str,
  ai_model_id: str,
  sentiment: sentimentSchema.optional(),
  voice_speed: num,
  is_filler: bool,
  fillers: str,
  assistant_image: str,
  ai_modal: str,
  sensitivity: num,
  temperature: num,
  opt_out_script: str,
  is_wait_start_speech: bool,
  utterance_length: num,
  meeting_note_prompt: str,
  call_outcome_prompt: str,
  actions: z.array(actionSchema).optional(),
  automation_hook: str,
  knowledge_base_Id: str,
  is_recording: bool,
  is_back_sound: bool,
  is_sensitivity: bool,
  is_opt_out: bool,
  generate_call_flow: bool,
  gender: str,
  is_start_speech_update: bool,
  company_website: str,
  vendor_lab_modal: str,
  voice_data: voiceDataSchema.optional(),
  stability: num,
  similarity: num,
  style_exaggeration: num,
  speaker_boost: bool,
  safety_fallback_delay: num,
  enable_delay: bool,
  is_call_flow: bool,
  call_flow: z.looseObject({}).optional(),
  background_type: str,
  background_volume: num,
  end_call_message: str,
  wait_max_interval: num,
  set_transcription_start_time: num,
  widget_config: z
    .looseObject({ api_key: str, enabled: bool, uiStyle: str, position: str, containerId: str, mode: str })
    .optional(),
});

/** Section 2.4. The field carrying a dialer's identifier is not shown; `id` or `_id` is kept when present. */
export const dialerSchema = z.looseObject({
  id,
  _id: id,
  dialer_type: str,
  name: str,
  phone_number: str,
  sid: str,
  auth_token: str,
  sip_termination_uri: str,
  sip_trunk_user_name: str,
  sip_trunk_password: str,
});

/** Section 2.5, request (rows 3 and 4: name, assistant_id, dialer_id required). */
export const inboundRequestSchema = z.strictObject({
  name: z.string().min(1),
  assistant_id: z.string().min(1),
  dialer_id: z.string().min(1),
  notification: z.boolean().default(false),
});
export const inboundSchema = z.looseObject({
  id,
  name: str,
  assistant_id: str,
  assistant_name: str,
  dialer_id: str,
  phone_number: str,
  incoming_count: num,
  notification: bool,
});

/** Section 2.6. */
export const tagSchema = z.looseObject({ id, _id: id, tag_id: id, name: str, description: str });
export const tagUpdateSchema = z.strictObject({ name: z.string(), description: z.string() });
export const tagContactRequestSchema = z.strictObject({
  first_name: str,
  last_name: str,
  phone: str,
  email: str,
  description: str,
  job_title: str,
  lifecycle_stage: str,
  lead_status: str,
});
export const tagContactSchema = z.looseObject({
  id,
  _id: id,
  contact_id: id,
  first_name: str,
  last_name: str,
  email: str,
  description: str,
  phone: str,
  sync_by: str,
});
/** Row 15: both fields are required in the request; the reply echoes them and is read leniently like the others. */
export const segmentRequestSchema = z.strictObject({ name: z.string().min(1), description: z.string().min(1) });
export const segmentSchema = z.looseObject({ name: str, description: str });

/** Section 2.7. The campaign list element shows no identifier: see `campaignId`. */
export const campaignSchema = z.looseObject({
  id,
  _id: id,
  campaign_id: id,
  campaigns_name: str,
  assistant_name: str,
  contact_name: str,
  dialer_name: str,
  dialer_type: str,
  phone_number: str,
  started_at: str,
  is_started: bool,
  is_automation: bool,
});
/** `call_duration_in_sec` is a string in the spec; a number is taken too. */
export const audienceSchema = z.looseObject({
  first_name: str,
  last_name: str,
  description: str,
  phone: str,
  status: str,
  call_duration_in_sec: z.union([z.string(), z.number()]).optional(),
  call_sentiment: str,
  calltranscribe: str,
  recording_url: str,
  error: str,
  is_call_transferred: bool,
  is_meeting_scheduled: bool,
  is_message_sent: bool,
});

/** Section 2.8. */
export const playgroundEntrySchema = z.looseObject({
  first_name: str,
  last_name: str,
  email: str,
  assistant_id: str,
  dialer_id: str,
  description: str,
  phone_number: z.array(z.string()).optional(),
});

/** Section 2.9 and section 4 rules 2 and 3. */
export const knowledgeEntrySchema = z.looseObject({ node_id: str, node_type: str, content: str, answer: str });
export const knowledgeEntryUpdateSchema = z.strictObject({
  node_id: z.string().min(1),
  node_type: z.string(),
  content: z.string(),
  answer: z.string(),
});
export const chunksEnvelopeSchema = z.looseObject({
  success: bool,
  message: str,
  data: z.looseObject({
    chunks: z.array(knowledgeEntrySchema),
    // Without pagination a reader can still stop at the first empty page.
    pagination: z.looseObject({ total: num, total_pages: num, page: num, limit: num }).optional(),
  }),
});

export const messageSchema = z.looseObject({ message: str });
export const successSchema = z.looseObject({ success: bool, message: str });

export type ErrorObject = z.infer<typeof errorObjectSchema>;
export type Assistant = z.infer<typeof assistantSchema>;
export type Dialer = z.infer<typeof dialerSchema>;
export type InboundRequest = z.input<typeof inboundRequestSchema>;
export type Inbound = z.infer<typeof inboundSchema>;
export type Tag = z.infer<typeof tagSchema>;
export type TagContactRequest = z.infer<typeof tagContactRequestSchema>;
export type TagContact = z.infer<typeof tagContactSchema>;
export type SegmentRequest = z.infer<typeof segmentRequestSchema>;
export type Segment = z.infer<typeof segmentSchema>;
export type Campaign = z.infer<typeof campaignSchema>;
export type Audience = z.infer<typeof audienceSchema>;
export type PlaygroundEntry = z.infer<typeof playgroundEntrySchema>;
export type KnowledgeEntry = z.infer<typeof knowledgeEntrySchema>;
export type KnowledgeEntryUpdate = z.infer<typeof knowledgeEntryUpdateSchema>;
export type ChunksEnvelope = z.infer<typeof chunksEnvelopeSchema>;
export type MessageReply = z.infer<typeof messageSchema>;
export type SuccessReply = z.infer<typeof successSchema>;

const asId = (value: string | number | undefined): string | undefined =>
  value === undefined || value === '' ? undefined : String(value);

/**
 * The identifier to pass as `id` to endpoint 9: the list (spec 2.7) shows none, so `id`, `_id` and `campaign_id` are
 * read.
 */
export function campaignId(campaign: Campaign): string | undefined {
  return asId(campaign.id) ?? asId(campaign._id) ?? asId(campaign.campaign_id);
}

/**
 * The identifier of a tag (endpoints 11, 12, 14): the tag of spec 2.6 shows none, so `id`, `_id` and `tag_id` are read.
 */
export function tagId(tag: Tag): string | undefined {
  return asId(tag.id) ?? asId(tag._id) ?? asId(tag.tag_id);
}

/** The identifier of a tag contact (endpoint 13): spec 2.6 lists `id`; `_id` and `contact_id` are read as well. */
export function tagContactId(contact: TagContact): string | undefined {
  return asId(contact.id) ?? asId(contact._id) ?? asId(contact.contact_id);
}

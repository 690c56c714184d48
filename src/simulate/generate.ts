/**
 * Synthetic calls as the calling service's AI would report them (spec 6.4): callers with names in several
 * languages and scripts, phone numbers written the many ways callers give them, outcomes, sentiments in any case,
 * and `""` for whatever "the AI could not find" (spec 6.3 rule 4). Seeded, so a run can be repeated exactly.
 */

export type Random = () => number;

/** mulberry32: a tiny, well-distributed 32-bit generator; enough for test data, not for secrets. */
export function seeded(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const digits = (random: Random, n: number) => Array.from({ length: n }, () => int(random, 0, 9)).join('');

/** First and last names, by the scripts callers of an Indian calling service write them in. */
const NAMES: readonly (readonly [string, string])[] = [
  ['Asha', 'Verma'],
  ['Ravi', 'Kumar'],
  ['Priya', 'Nair'],
  ['Arjun', 'Reddy'],
  ['Meera', 'Iyer'],
  ['Sandeep', 'Singh'],
  ['आशा', 'वर्मा'],
  ['राहुल', 'शर्मा'],
  ['सुनीता', 'देवी'],
  ['மீனா', 'ஐயர்'],
  ['கார்த்திக்', 'ராஜா'],
  ['অনিক', 'দাস'],
  ['ಅನಿಲ್', 'ಗೌಡ'],
  ['ప్రియ', 'రెడ్డి'],
  ['فاطمة', 'الزهراء'],
  ['محمد', 'الكندري'],
  ['José', 'García'],
  ['Lucía', 'Fernández'],
  ['Émile', 'Dubois'],
  ['Jürgen', 'Müller'],
  ['Emily', "O'Connor"],
  ['伟', '王'],
  ['Nguyễn', 'Văn An'],
];

const PRODUCTS = [
  'electric kettle',
  'mixer grinder',
  'water purifier',
  'air cooler',
  'pressure cooker',
  'ceiling fan',
  'LED TV',
];
const OUTCOMES = [
  'order placed',
  'callback requested',
  'not interested',
  'wrong number',
  'information shared',
  'order cancelled',
];
const SENTIMENTS = ['Positive', 'positive', 'POSITIVE', 'Neutral', 'neutral', ' Neutral ', 'Negative', 'negative'];
const CITIES = [
  ['Mumbai', '400001'],
  ['Chennai', '600004'],
  ['Bengaluru', '560001'],
  ['Kolkata', '700016'],
  ['Dubai', '00000'],
  ['London', 'NW1 6XE'],
] as const;

/** An Indian mobile number as callers say it, or a foreign one in E.164 (spec 6.4 asks the AI for E.164). */
function phoneNumber(random: Random): string {
  const mobile = `${int(random, 6, 9)}${digits(random, 9)}`;
  const [a, b] = [mobile.slice(0, 5), mobile.slice(5)];
  return pick(random, [
    `+91${mobile}`,
    `+91 ${a} ${b}`,
    `0${mobile}`,
    mobile,
    `0091-${a}-${b}`,
    `+91-${a}-${b}`,
    `${a} ${b}`,
    // Foreign callers' numbers as the AI is asked to give them, E.164; UK and US from the ranges kept for fiction
    // (Ofcom's London drama range, North America's 555-01xx), so no real subscriber is ever named.
    `+4420794600${digits(random, 2)}`,
    `+1415555010${digits(random, 1)}`,
    `+9715${pick(random, ['0', '2', '5', '6'])}${digits(random, 7)}`,
  ]);
}

export interface CallOptions {
  /** Each value's chance of being sent as "" (spec 6.3 rule 4). */
  empty: number;
  /** Distinguishes the calls of one run from another's. */
  run: string;
  /** Calls are dated in the 30 days up to this day, `YYYY-MM-DD` (a seeded run repeats exactly on the same day). */
  today: string;
}

/** The body parameters of one call, as the AI fills them from the transcript; `call_id` is the sender's own. */
export function syntheticCall(
  random: Random,
  n: number,
  { empty, run, today }: CallOptions,
): Record<string, string | number> {
  const [first, last] = pick(random, NAMES);
  const product = pick(random, PRODUCTS);
  const outcome = pick(random, OUTCOMES);
  const quantity = int(random, 1, 4);
  const [city, pincode] = pick(random, CITIES);
  const day = new Date(Date.parse(today) - int(random, 0, 30) * 86_400_000).toISOString().slice(0, 10);
  const ordered = outcome === 'order placed';
  const fields: Record<string, string | number> = {
    first_name: first,
    last_name: last,
    phone_number: phoneNumber(random),
    email_address: `${['asha', 'ravi', 'priya', 'jose', 'emily', 'meera'][n % 6]}.${n}@example.com`,
    // Unique to the call, and only where an order was placed: the AI never invents one (spec 6.3 rule 1).
    order_id: ordered ? `ORD-${run}-${n}` : '',
    call_date: day,
    call_duration: int(random, 8, 900),
    call_cost: Math.round(random() * 2000) / 100,
    product_name: product,
    quantity: ordered ? quantity : '',
    order_value: ordered ? quantity * int(random, 499, 4999) : '',
    address: `${int(random, 1, 250)}, ${pick(random, ['MG Road', 'Anna Salai', 'Park Street', 'Sheikh Zayed Road', 'Baker Street'])}, ${city}`,
    pincode,
    sentiment_analysis: pick(random, SENTIMENTS),
    call_outcome: outcome,
    call_summary: `${first} ${summaryOf(outcome, product, quantity)}`,
    recording_url: `https://recordings.example.com/${run}/${n}.mp3`,
  };
  for (const key of Object.keys(fields)) if (random() < empty) fields[key] = '';
  // The sender's own identifier of the call is never something the AI has to find.
  return { call_id: `sim-${run}-${n}`, ...fields };
}

function summaryOf(outcome: string, product: string, quantity: number): string {
  switch (outcome) {
    case 'order placed':
      return `ordered ${quantity} × ${product} and confirmed the address.`;
    case 'callback requested':
      return `asked to be called back about the ${product} next week.`;
    case 'not interested':
      return `was not interested in the ${product} offer.`;
    case 'wrong number':
      return 'said the number belongs to someone else.';
    case 'order cancelled':
      return `cancelled the earlier ${product} order.`;
    default:
      return `asked about the ${product} price and warranty.`;
  }
}

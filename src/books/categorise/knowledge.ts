/**
 * What the categoriser knows before a business has any history: common merchants and
 * keywords, each mapped to an account of the standard chart by its name (src/books/chart.ts
 * STANDARD_CHART). Phrases are written as the text module reads text: folded, without
 * apostrophes or ampersands ("mcdonalds", "att"), words separated by one space.
 *
 * Both kinds start below the review threshold: a general rule is right for most businesses,
 * not for this one in particular, so fresh books never accept on it alone. Once the books hold
 * enough payments to the merchants and words it names, the categoriser scores it by how often
 * this business booked them where it says (index.ts, knowledgeAccuracyFrom).
 */

/** Confidence of a known merchant's usual account, with no history of this business behind it. */
export const MERCHANT_CONFIDENCE = 0.7;
/** Confidence of a keyword's usual account: a word is vaguer than a merchant's name. */
export const KEYWORD_CONFIDENCE = 0.6;

export type KnowledgeKind = 'merchant' | 'keyword';

export interface KnownPhrase {
  phrase: string;
  kind: KnowledgeKind;
  /** An account name of the standard chart. */
  accountName: string;
  /** What the merchant or word is, for the rationale ("a fuel merchant"). */
  what: string;
}

const TABLE: Array<[accountName: string, kind: KnowledgeKind, what: string, phrases: string]> = [
  ['Travel', 'merchant', 'a fuel station chain', 'shell|chevron|exxon|exxonmobil|mobil|bp|texaco|valero|sunoco|citgo|arco|speedway|circle k|quiktrip|wawa|sheetz|marathon petroleum|phillips|conoco'],
  ['Travel', 'merchant', 'a ride or taxi service', 'uber|lyft|yellow cab'],
  ['Travel', 'merchant', 'an airline', 'delta|delta air|united airlines|american airlines|southwest|southwest airlines|jetblue|alaska airlines|spirit airlines|frontier airlines|air canada|british airways|lufthansa'],
  ['Travel', 'merchant', 'a travel or lodging company', 'expedia|airbnb|booking com|marriott|hilton|hyatt|holiday inn|best western|hampton inn|sheraton|westin|hotels com|amtrak|greyhound'],
  ['Travel', 'merchant', 'a car rental company', 'hertz|avis|budget rent|enterprise rent|national car|alamo|sixt|zipcar|turo'],
  ['Meals', 'merchant', 'a restaurant or coffee chain', 'starbucks|dunkin|mcdonalds|chipotle|panera|subway|chick fil|taco bell|wendys|burger king|dominos|pizza hut|sweetgreen|peets|tim hortons|shake shack|five guys|olive garden'],
  ['Meals', 'merchant', 'a food delivery service', 'doordash|uber eats|ubereats|grubhub|postmates|seamless|caviar|ezcater'],
  ['Software and Subscriptions', 'merchant', 'a software company', 'adobe|github|gitlab|atlassian|jira|slack|zoom|zoom us|dropbox|google workspace|gsuite|google cloud|microsoft|msft|microsoft office|aws|amazon web services|heroku|digitalocean|notion|figma|canva|intuit|quickbooks|xero|shopify|squarespace|wix|godaddy|namecheap|openai|anthropic|salesforce|docusign|zapier|asana|trello|monday com|calendly|twilio|sendgrid|cloudflare|vercel|netlify|linode|apple com bill|icloud|lastpass|onepassword|grammarly'],
  ['Office Supplies', 'merchant', 'an office supplies store', 'staples|office depot|officemax|uline|viking office'],
  ['Utilities', 'merchant', 'a utility or telecom company', 'comcast|xfinity|verizon|att|t mobile|tmobile|sprint|spectrum|cox communications|centurylink|frontier communications|pge|con edison|coned|duke energy|national grid|xcel energy|dominion energy|southern california edison|georgia power|florida power'],
  ['Advertising and Marketing', 'merchant', 'an advertising platform', 'google ads|adwords|facebook ads|facebk|fb ads|meta ads|meta platforms|linkedin ads|twitter ads|yelp|mailchimp|constant contact|hubspot|vistaprint|moo print|nextdoor ads|bing ads|microsoft ads'],
  ['Insurance', 'merchant', 'an insurer', 'state farm|geico|progressive|allstate|liberty mutual|nationwide|hartford|the hartford|travelers insurance|hiscox|next insurance|farmers insurance|usaa|chubb|cna insurance'],
  ['Rent', 'merchant', 'a workspace provider', 'wework|regus'],
  ['Professional Fees', 'merchant', 'a legal or tax service', 'legalzoom|rocket lawyer|hr block|jackson hewitt|turbotax'],
  ['Contractors', 'merchant', 'a freelance marketplace', 'upwork|fiverr|toptal|freelancer com'],
  ['Bank Fees', 'keyword', 'a bank charge', 'service charge|service fee|monthly fee|maintenance fee|monthly maintenance|overdraft|overdraft fee|nsf fee|wire fee|wire transfer fee|atm fee|bank fee|account fee|foreign transaction fee|returned item fee|stop payment fee'],
  ['Travel', 'keyword', 'a travel expense', 'fuel|gasoline|gas station|petrol|diesel|airline|airlines|airfare|flight|hotel|motel|lodging|taxi|cab fare|parking|toll|tolls|rideshare|car rental|rental car|train|mileage|travel'],
  ['Meals', 'keyword', 'a meal', 'restaurant|cafe|coffee|lunch|dinner|breakfast|catering|pizza|grill|bistro|diner|bakery|eatery|deli|taqueria|sushi|food|meal|meals'],
  ['Software and Subscriptions', 'keyword', 'software', 'software|subscription|saas|web hosting|hosting|domain|domain name|app subscription|cloud storage|license renewal'],
  ['Office Supplies', 'keyword', 'office supplies', 'office supplies|office supply|stationery|paper|printer paper|toner|ink|printer ink|envelopes|postage|stamps|pens'],
  ['Utilities', 'keyword', 'a utility bill', 'electric|electricity|power company|water|sewer|trash|waste management|internet|broadband|phone bill|telephone|wireless|utility|utilities|energy|natural gas|gas bill'],
  ['Advertising and Marketing', 'keyword', 'advertising', 'advertising|advertisement|ads|marketing|promotion|promotional|sponsorship|billboard|flyers|business cards'],
  ['Insurance', 'keyword', 'an insurance premium', 'insurance|insurance premium|liability insurance'],
  ['Rent', 'keyword', 'rent', 'rent|office rent|lease|coworking|office space|storage unit'],
  ['Professional Fees', 'keyword', 'a professional service', 'legal|attorney|lawyer|law firm|law office|accountant|accounting|cpa|bookkeeping|tax preparation|notary|consulting fee'],
  ['Contractors', 'keyword', 'contract work', 'contractor|contract labor|freelance|freelancer|subcontractor'],
];

/** Every known phrase, longest first (more words, then merchants before keywords), then table order. */
export const KNOWN_PHRASES: readonly KnownPhrase[] = TABLE.flatMap(([accountName, kind, what, phrases]) =>
  phrases.split('|').map((phrase) => ({ phrase, kind, accountName, what })),
)
  .map((entry, index) => ({ entry, index }))
  .sort((a, b) => {
    const words = b.entry.phrase.split(' ').length - a.entry.phrase.split(' ').length;
    if (words !== 0) return words;
    if (a.entry.kind !== b.entry.kind) return a.entry.kind === 'merchant' ? -1 : 1;
    return a.index - b.index;
  })
  .map(({ entry }) => entry);

/** The known phrases by their first word, each with its words and its place in KNOWN_PHRASES. */
const BY_FIRST_WORD = new Map<string, Array<{ words: string[]; rank: number }>>();
KNOWN_PHRASES.forEach((known, rank) => {
  const words = known.phrase.split(' ');
  const first = words[0] as string;
  BY_FIRST_WORD.set(first, [...(BY_FIRST_WORD.get(first) ?? []), { words, rank }]);
});

/**
 * The first known phrase (in KNOWN_PHRASES order) that `words` hold as consecutive whole words,
 * among those whose account the business has.
 */
export function findKnownPhrase(words: readonly string[], hasAccount: (accountName: string) => boolean): KnownPhrase | undefined {
  let best: number | undefined;
  for (let i = 0; i < words.length; i += 1) {
    for (const candidate of BY_FIRST_WORD.get(words[i] as string) ?? []) {
      if (best !== undefined && candidate.rank >= best) continue;
      if (!candidate.words.every((word, j) => words[i + j] === word)) continue;
      if (hasAccount((KNOWN_PHRASES[candidate.rank] as KnownPhrase).accountName)) best = candidate.rank;
    }
  }
  return best === undefined ? undefined : KNOWN_PHRASES[best];
}

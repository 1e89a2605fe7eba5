// How a provider's failure becomes a canonical code: HTTP statuses (H1), the Retry-After
// header (H2), and an `{"error": …}` object sent inside a 200 stream (S7).

// Wording that means the account is out of quota or credit, whatever the status (H1, and
// the harness's classifier in harness-contract.md §b.7 rule 3).
const QUOTA_WORDING = [
  /insufficient[ _-](quota|balance|credits?)/i,
  /(quota|usage limit)[ _-](exceeded|exhausted|reached)/i,
  /exceed(ed|s)? (your |the )?(current )?quota/i,
  /(balance|credits?) (exhausted|depleted)/i,
  /out of (credits?|budget)/i,
];

// Wording that means the prompt is larger than the model's context window (H1: only with 400).
const CONTEXT_WORDING = [
  /context[ _-]length[ _-]exceeded/i,
  /maximum context length/i,
  /context[ _-]window/i,
  /request too large for model context/i,
  /(prompt|input) is too long/i,
];

const matchesAny = (patterns, text) => patterns.some((re) => re.test(text));

/** The words of an error body worth classifying: its code, type and message, or the raw text. */
export function errorDetail(bodyText) {
  let parsed;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { detail: bodyText, message: bodyText.trim().slice(0, 300) };
  }
  const error = parsed && typeof parsed === 'object' ? (parsed.error ?? parsed) : parsed;
  return detailOfErrorValue(error);
}

export function detailOfErrorValue(error) {
  if (typeof error === 'string') return { detail: error, message: error };
  if (error && typeof error === 'object') {
    const parts = [error.code, error.type, error.message]
      .filter((v) => typeof v === 'string' || typeof v === 'number')
      .map(String);
    const message = typeof error.message === 'string' && error.message !== '' ? error.message : '';
    return { detail: parts.join(' '), message };
  }
  return { detail: '', message: '' };
}

/** H1: the first matching rule decides. */
export function codeForStatus(status, detail) {
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 413) return 'INVALID_REQUEST';
  if (matchesAny(QUOTA_WORDING, detail)) return 'QUOTA';
  if (status === 429) return 'RATE_LIMIT';
  if (status === 400) return matchesAny(CONTEXT_WORDING, detail) ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST';
  if (status >= 500) return 'SERVER';
  return `HTTP_${status}`;
}

const HTTP_DATE = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  // obsolete RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  // asctime: Sun Nov  6 08:49:37 1994
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/**
 * H2: Retry-After as delay-seconds or an HTTP date, in milliseconds from `now`.
 * Zero, past, unparsable or absurd values give undefined (ignored).
 */
export function parseRetryAfter(value, now = Date.now()) {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  let ms;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else if (HTTP_DATE.some((re) => re.test(text))) {
    const at = Date.parse(/GMT$/.test(text) ? text : `${text} GMT`);
    ms = at - now;
  } else {
    return undefined;
  }
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * S7: an `{"error": …}` payload in a 200 stream. SERVER with the provider's message, unless
 * the error carries an HTTP status of its own (`code` or `status`), which is then mapped
 * like an HTTP answer.
 */
export function classifyStreamError(error) {
  const { detail, message } = detailOfErrorValue(error);
  let status;
  if (error && typeof error === 'object') {
    for (const candidate of [error.status, error.code]) {
      const n = typeof candidate === 'string' && /^\d{3}$/.test(candidate) ? Number(candidate) : candidate;
      if (Number.isInteger(n) && n >= 400 && n <= 599) {
        status = n;
        break;
      }
    }
  }
  const code = status === undefined ? 'SERVER' : codeForStatus(status, detail);
  return { code, message: message || 'provider sent an error object in the stream' };
}

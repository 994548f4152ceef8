/** One rule of gitleaks' config, as scripts/gitleaks-rules.py writes it (regexes rewritten for JavaScript). */
export interface GitleaksRule {
  id: string;
  regex: string;
  flags: string;
  /** Lower-case words one of which the text must contain for the rule to be tried (gitleaks' prefilter). */
  keywords: string[];
  /** Which capture group is the secret (default: the first group that matched, else the whole match). */
  secretGroup?: number;
  /** Shannon entropy (bits per character) the secret must reach. */
  entropy?: number;
  /** A match any of these allows is no secret: regexes on the secret (or the match), or a stop word in the secret. */
  allow?: Array<{ regexes?: Array<[string, string]>; target?: string; stopwords?: string[] }>;
}

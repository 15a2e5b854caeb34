//! Counting model tokens without running the model: an estimate for fakes, and an exact
//! WordPiece walk for ASCII text that is faster than the tokenizer.

/// A model-free token estimate: words and punctuation marks, with long words split the way
/// WordPiece tends to split them. Used by fakes and where no tokenizer is loaded.
pub fn approx_tokens(text: &str) -> usize {
    let mut n = 0;
    for word in text.split_whitespace() {
        let mut run = 0usize;
        for c in word.chars() {
            if c.is_alphanumeric() {
                run += 1;
            } else {
                n += 1 + run.div_ceil(6);
                run = 0;
            }
        }
        n += run.div_ceil(6);
    }
    n
}

/// Counts BERT WordPiece tokens of ASCII text without the tokenizer: lowercase, split on
/// whitespace and ASCII punctuation, greedy longest-match with `##` continuations, a word over
/// 100 characters or with no match is one `[UNK]`. The tokenizers crate made context packing slower
/// than its goal (`cargo bench --bench tier`); this walk is exact for ASCII (checked against the tokenizer at load and in
/// `tests/embedder.rs`) and returns `None` for anything else, which the tokenizer then counts.
pub struct WordPieceCounter {
    words: std::collections::HashSet<String>,
    continuations: std::collections::HashSet<String>,
    /// Added tokens (`[UNK]`, `[SEP]`…): the tokenizer matches them in raw text, so text holding
    /// one goes to the tokenizer.
    specials: Vec<String>,
}

impl WordPieceCounter {
    /// `None` unless the tokenizer is a lowercasing BERT WordPiece one.
    pub fn new(tokenizer: &tokenizers::Tokenizer) -> Option<WordPieceCounter> {
        let json = serde_json::to_value(tokenizer).ok()?;
        let bert = json["normalizer"]["type"] == "BertNormalizer"
            && json["normalizer"]["lowercase"] == true
            && json["pre_tokenizer"]["type"] == "BertPreTokenizer"
            && json["model"]["type"] == "WordPiece"
            && json["model"]["continuing_subword_prefix"] == "##"
            && json["model"]["max_input_chars_per_word"] == 100;
        if !bert {
            return None;
        }
        let vocab = tokenizer.get_vocab(false);
        let mut words = std::collections::HashSet::new();
        let mut continuations = std::collections::HashSet::new();
        for token in vocab.into_keys() {
            match token.strip_prefix("##") {
                Some(rest) => continuations.insert(rest.to_string()),
                None => words.insert(token),
            };
        }
        let specials = tokenizer.get_added_tokens_decoder().into_values().map(|t| t.content).collect();
        Some(WordPieceCounter { words, continuations, specials })
    }

    /// The token count of ASCII `text`; `None` for other text.
    pub fn count(&self, text: &str) -> Option<usize> {
        self.plain(text).then(|| self.ascii(text))
    }

    /// ASCII without added tokens.
    fn plain(&self, text: &str) -> bool {
        text.is_ascii() && (!text.contains('[') || !self.specials.iter().any(|s| text.contains(s.as_str())))
    }

    /// The token count of any text: plain ASCII words here, the others (joined by spaces, which WordPiece
    /// never tokenizes across) by `slow`, the tokenizer.
    pub fn count_mixed(&self, text: &str, slow: &dyn Fn(&str) -> usize) -> usize {
        if self.plain(text) {
            return self.ascii(text);
        }
        let mut rest = String::new();
        let mut n = 0;
        for w in text.split(|c: char| c.is_whitespace()) {
            if self.plain(w) {
                n += self.ascii(w);
            } else {
                rest.push_str(w);
                rest.push(' ');
            }
        }
        n + slow(&rest)
    }

    fn ascii(&self, text: &str) -> usize {
        let mut n = 0;
        let mut word = String::with_capacity(32);
        for b in text.bytes() {
            let c = b as char;
            if c.is_ascii_whitespace() || c.is_ascii_control() || c.is_ascii_punctuation() {
                n += self.word(&word);
                word.clear();
                if c.is_ascii_punctuation() {
                    n += 1;
                }
            } else {
                word.push(c.to_ascii_lowercase());
            }
        }
        n + self.word(&word)
    }

    fn word(&self, w: &str) -> usize {
        if w.is_empty() {
            return 0;
        }
        if w.len() > 100 {
            return 1;
        }
        let mut pieces = 0;
        let mut start = 0;
        while start < w.len() {
            let vocab = if start == 0 { &self.words } else { &self.continuations };
            match (start + 1..=w.len()).rev().find(|&end| vocab.contains(&w[start..end])) {
                Some(end) => {
                    pieces += 1;
                    start = end;
                }
                None => return 1,
            }
        }
        pieces
    }

    /// Whether the walk gives the tokenizer's counts on probe texts (code, prose, symbols).
    pub(crate) fn agrees_with(&self, tokenizer: &tokenizers::Tokenizer) -> bool {
        const PROBES: [&str; 4] = [
            "fn parse_config(path: &Path) -> Result<Config, Error> { let x = a::b::<T>(); }",
            "Sessions moved from Memcached to Redis; the TTL stays 30 minutes (see ADR-0003).",
            "unbelievably-long_identifier.withDots and CamelCaseWords x86_64 \t tabs\n\rnewlines ~`!@#$%^&*",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa zzqxj",
        ];
        PROBES.iter().all(|p| Some(tokenizer.encode_fast(*p, false).map(|e| e.len()).unwrap_or(0)) == self.count(p))
    }
}

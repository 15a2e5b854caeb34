//! Near-duplicate hits. A project may hold one text several times: a Texinfo manual and the Info
//! file and man page built from it, a document kept once per release, a parser's actions copied
//! into the parser generated from its grammar. A copy ranked below its original adds no evidence
//! and takes a result slot from another file, so search folds it into the better hit, which names
//! it (`Hit::also_in`). Texts are compared by their word pairs: markup (`@code{x}` against `'x'`)
//! and line breaks differ between copies, the run of words does not.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash, Hasher};

/// Word pairs a text must have before it can be called a copy: a line or two repeated (a
/// signature, a licence line) is not a duplicate document.
const MIN_PAIRS: usize = 12;

/// A text's word pairs (lowercased alphanumeric words, hashed), what copies are compared by.
#[derive(Debug, Default)]
pub(crate) struct Pairs(HashSet<u64, BuildHasherDefault<Hashed>>);

impl Pairs {
    pub(crate) fn of(text: &str) -> Pairs {
        let mut pairs = HashSet::default();
        let mut previous = None;
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let mut h = DefaultHasher::new();
            word.chars().flat_map(char::to_lowercase).for_each(|c| c.hash(&mut h));
            let word = h.finish();
            if let Some(previous) = previous {
                let mut h = DefaultHasher::new();
                (previous, word).hash(&mut h);
                pairs.insert(h.finish());
            }
            previous = Some(word);
        }
        Pairs(pairs)
    }

    /// Whether one text is mostly the other: at least `overlap` of the smaller one's pairs occur
    /// in the larger (chunks of two copies are cut at different places, so one may hold only
    /// part of the other). Search compares each candidate with every hit kept before it, and most
    /// are no copy: the count stops as soon as too many pairs are missing.
    pub(crate) fn copies(&self, other: &Pairs, overlap: f32) -> bool {
        let (small, large) = if self.0.len() <= other.0.len() { (self, other) } else { (other, self) };
        if overlap <= 0.0 || small.0.len() < MIN_PAIRS {
            return false;
        }
        let needed = ((overlap * small.0.len() as f32).ceil() as usize).min(small.0.len());
        let mut spare = small.0.len() - needed;
        for pair in &small.0 {
            if !large.0.contains(pair) {
                if spare == 0 {
                    return false;
                }
                spare -= 1;
            }
        }
        true
    }
}

/// The hasher of a set of values that are hashes already: each is its own hash.
#[derive(Default)]
struct Hashed(u64);

impl Hasher for Hashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXI: &str = "@item --yylineno, @code{%option yylineno}\ndirects @code{flex} to generate a scanner \
        that maintains the number of the current line read from its input in the global variable \
        @code{yylineno}.  This option is implied by @code{%option lex-compat}.";
    const INFO: &str = "'--yylineno, '%option yylineno''\n     directs 'flex' to generate a scanner that\n     \
        maintains the number of the current line read from its input in\n     the global variable 'yylineno'.  \
        This option is implied by '%option\n     lex-compat'.  In a reentrant C scanner, the macro 'yylineno'";
    const OTHER: &str = "If you do not supply your own version of yywrap(), then you must either use \
        %option noyywrap (in which case the scanner behaves as though yywrap() returned 1), or you must \
        link with -lfl to obtain the default version of the routine, which always returns 1.";

    #[test]
    fn a_copy_in_other_markup_is_one_a_text_on_the_same_topic_is_not() {
        let (texi, info, other) = (Pairs::of(TEXI), Pairs::of(INFO), Pairs::of(OTHER));
        assert!(texi.copies(&info, 0.5) && info.copies(&texi, 0.5));
        assert!(!texi.copies(&other, 0.5) && !other.copies(&info, 0.5));
        assert!(!texi.copies(&info, 0.0), "0 turns folding off");
    }

    #[test]
    fn a_copy_needs_the_overlap_share_of_the_smaller_texts_pairs_and_no_fewer() {
        let words = |prefix: &str, n: usize| (0..n).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>().join(" ");
        // 20 pairs, of which the larger text (45 pairs) holds the first 14: a share of 0.7.
        let small = Pairs::of(&words("a", 21));
        let large = Pairs::of(&format!("{} {}", words("a", 15), words("b", 31)));
        assert!(small.copies(&large, 0.7) && large.copies(&small, 0.7));
        assert!(!small.copies(&large, 0.71) && !large.copies(&small, 0.71));
        assert!(small.copies(&small, 1.0));
    }

    #[test]
    fn a_short_text_is_never_a_copy() {
        let line = Pairs::of("pub fn open(path: &Path) -> Result<Index>");
        assert!(!line.copies(&Pairs::of("pub fn open(path: &Path) -> Result<Index> { todo!() }"), 0.1));
    }
}

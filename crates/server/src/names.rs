//! Display names: what a person may be called in a room.
//!
//! A name is cleaned before any check: NFKC-normalised (full-width and mathematical
//! letters become plain ones), invisible characters removed (controls, format characters
//! such as zero-width spaces and joiners or bidi overrides, variation selectors, Hangul and
//! Braille fillers, private-use and unassigned code points), every run of spaces made one
//! space, and trimmed. The cleaned name must have 1 to [`MAX_NAME_CHARS`] characters, at
//! least one of them a letter, digit, punctuation or symbol, and must not imitate a bot:
//! no word of it (letters and digits, case-insensitive, read through the Unicode
//! confusables skeleton of UTS #39 so that look-alike letters count as the letters they
//! imitate) may be `bot` or `bots`, the word bots carry in their names ("Greedy bot 1").

use parchis_protocol::MAX_NAME_CHARS;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// Why a name was refused (the text goes to the client as a `bad_request`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Nothing visible is left once invisible characters are removed.
    #[error("a display name needs at least one visible character")]
    Blank,
    /// Longer than [`MAX_NAME_CHARS`] characters once cleaned.
    #[error("a display name has at most {MAX_NAME_CHARS} characters")]
    TooLong,
    /// Contains the word `bot`: only the server names bots.
    #[error("a display name may not contain the word \"bot\": only bots are called that")]
    ImitatesBot,
}

/// Invisible characters that Unicode does not class as format or control characters.
fn is_filler(c: char) -> bool {
    matches!(
        c,
        '\u{034F}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FFA0}'
            | '\u{E0100}'..='\u{E01EF}'
    )
}

fn is_invisible(c: char) -> bool {
    is_filler(c)
        || matches!(
            c.general_category(),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Surrogate
                | GeneralCategory::PrivateUse
                | GeneralCategory::Unassigned
        )
}

fn is_space(c: char) -> bool {
    c.is_whitespace() || c.general_category_group() == GeneralCategoryGroup::Separator
}

/// The cleaned display name for `raw`, or why it is refused (see the module docs).
///
/// ```
/// use parchis_server::names::{display_name, NameError};
/// assert_eq!(display_name("  Ana\u{200B}  María ").as_deref(), Ok("Ana María"));
/// assert_eq!(display_name("\u{200B}\u{2060}"), Err(NameError::Blank));
/// assert_eq!(display_name("Greedy BOT 1"), Err(NameError::ImitatesBot));
/// ```
pub fn display_name(raw: &str) -> Result<String, NameError> {
    let mut name = String::with_capacity(raw.len());
    let mut pending_space = false;
    for c in raw.nfkc() {
        if is_space(c) {
            pending_space = !name.is_empty();
        } else if !is_invisible(c) {
            if pending_space {
                name.push(' ');
                pending_space = false;
            }
            name.push(c);
        }
    }
    let visible = name.chars().any(|c| {
        !matches!(
            c.general_category_group(),
            GeneralCategoryGroup::Mark
                | GeneralCategoryGroup::Separator
                | GeneralCategoryGroup::Other
        )
    });
    if !visible {
        return Err(NameError::Blank);
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(NameError::TooLong);
    }
    // Compared through the Unicode confusables skeleton (UTS #39), so look-alike letters
    // ("Вot" with a Cyrillic В, "bοt" with a Greek ο) do not pass for other words.
    let skeleton: String = unicode_security::confusable_detection::skeleton(&name).collect();
    let imitates = skeleton
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| word.eq_ignore_ascii_case("bot") || word.eq_ignore_ascii_case("bots"));
    if imitates {
        return Err(NameError::ImitatesBot);
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_only_names_are_blank() {
        for raw in [
            "",
            "   ",
            "\u{200B}",
            "\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}",
            "\u{202E}\u{2066}",
            "\u{3164}\u{3164}",
            "\u{2800}",
            "\u{115F}\u{1160}",
            "\u{FE0F}",
            "\u{0301}\u{0301}",
            "\u{E000}",
            "\t\n\u{00A0}\u{3000}",
        ] {
            assert_eq!(display_name(raw), Err(NameError::Blank), "{raw:?}");
        }
    }

    #[test]
    fn names_are_cleaned_and_kept() {
        assert_eq!(display_name("Ana").as_deref(), Ok("Ana"));
        assert_eq!(
            display_name("  Jo\u{200B}sé   Luis\u{00A0}").as_deref(),
            Ok("José Luis")
        );
        assert_eq!(display_name("Ｐｅｐｅ").as_deref(), Ok("Pepe"));
        assert_eq!(display_name("Robot Wars").as_deref(), Ok("Robot Wars"));
        assert_eq!(display_name("Abbot").as_deref(), Ok("Abbot"));
        assert_eq!(display_name("李小龙").as_deref(), Ok("李小龙"));
        assert_eq!(display_name("🎲").as_deref(), Ok("🎲"));
    }

    #[test]
    fn bot_names_are_refused() {
        for raw in [
            "Greedy bot 1",
            "bot",
            "BOT",
            "Expectimax bot 2",
            "b\u{200B}ot",
            "ｂｏｔ",
            "𝐁𝐨𝐭 3",
            "my-bot",
            // Look-alike letters: Cyrillic В, Greek ο, fullwidth letters.
            "Greedy Вot 1",
            "Greedy bοt 1",
            "Random ｂｏｔ 2",
            "Bots",
        ] {
            assert_eq!(display_name(raw), Err(NameError::ImitatesBot), "{raw:?}");
        }
    }

    #[test]
    fn length_is_counted_after_cleaning() {
        let long = "a".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(display_name(&long), Err(NameError::TooLong));
        let padded = format!("{}{}", "a".repeat(MAX_NAME_CHARS), "\u{200B}".repeat(50));
        assert_eq!(display_name(&padded).map(|n| n.len()), Ok(MAX_NAME_CHARS));
    }
}

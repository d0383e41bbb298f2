//! [`shell_word`]: one string as one word of a POSIX shell. The one quoter
//! every part of flow uses — templates' `shell_quote` filter, job scripts,
//! container commands, the commands shown by `flow plan --command`, the
//! report and the run display — so all agree on what needs quotes.

/// `text` as one shell word: as it is when it holds only characters no
/// shell treats specially, else single-quoted (`'it'\''s'` for `it's`,
/// `''` for nothing).
pub fn shell_word(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,/:@%+=".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn plain_words_stay_and_others_are_quoted() {
        assert_eq!(shell_word("data/a-1.txt"), "data/a-1.txt");
        assert_eq!(shell_word("user@host:%j"), "user@host:%j");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$(touch x)"), "'$(touch x)'");
        assert_eq!(shell_word("a b"), "'a b'");
    }
}

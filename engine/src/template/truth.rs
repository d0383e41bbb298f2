//! [`is_true`]: whether a rendered condition (`when`) holds.

/// Whether the rendered text of a condition counts as true. Jinja's false
/// values as they render — `""`, `false`, `0`, `none`, an empty list or
/// map — are false, and so are the words `no` and `0.0`; case and
/// surrounding white space are ignored. Anything else is true.
pub fn is_true(rendered: &str) -> bool {
    let word = rendered.trim().to_ascii_lowercase();
    !matches!(word.as_str(), "" | "false" | "no" | "0" | "0.0" | "none" | "[]" | "{}")
}

#[cfg(test)]
mod tests {
    use super::is_true;

    #[test]
    fn jinja_false_values_and_words_are_false() {
        for text in ["", "  ", "false", "False", " no\n", "0", "0.0", "none", "None", "[]", "{}"] {
            assert!(!is_true(text), "{text:?}");
        }
        for text in ["true", "yes", "1", "0.5", "x", "[1]", "nope"] {
            assert!(is_true(text), "{text:?}");
        }
    }
}

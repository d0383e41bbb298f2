//! [`Selector`]: `name` or `name[1-10,20]`, a task and optionally some of its indices.

use crate::ir::IntRange;
use crate::units::parse_ranges;

/// A task name with an optional list of `index` values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// The task name.
    pub name: String,
    /// Selected `index` values; `None` selects every instance.
    pub indices: Option<Vec<IntRange>>,
}

impl Selector {
    /// Parses `name`, `name[3]`, `name[1-10:2,20]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let Some(open) = text.find('[') else {
            return Ok(Self { name: text.to_owned(), indices: None });
        };
        let inner =
            text[open + 1..].strip_suffix(']').ok_or_else(|| format!("`{text}` has `[` without a closing `]`"))?;
        let indices = parse_ranges(inner).map_err(|e| format!("bad index list in `{text}`: {e}"))?;
        Ok(Self { name: text[..open].trim().to_owned(), indices: Some(indices) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_indices() {
        assert_eq!(Selector::parse("score").unwrap(), Selector { name: "score".into(), indices: None });
        let s = Selector::parse("expand[3]").unwrap();
        assert_eq!(s.name, "expand");
        assert_eq!(s.indices, Some(vec![IntRange { start: 3, count: 1, step: 1 }]));
        assert_eq!(Selector::parse("a[1-10:2,20]").unwrap().indices.unwrap().len(), 2);
        assert!(Selector::parse("a[1").is_err());
        assert!(Selector::parse("a[x]").is_err());
    }
}

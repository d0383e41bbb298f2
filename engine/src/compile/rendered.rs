//! [`Rendered`]: what dependency inference's first pass keeps of a group
//! for its second — the rendered inputs and `after` selectors of every
//! instance, and the key each came from.

use std::ops::Range;

use crate::ir::{EdgeOn, StrPool};

/// What pass one keeps of a group for pass two: rendered strings per
/// instance, and which key (by span) each came from.
#[derive(Default)]
pub struct Rendered {
    /// Normalised input paths of all instances.
    pub inputs: StrPool,
    /// Key index of each input.
    pub input_keys: Vec<u32>,
    /// End of each instance's inputs in `inputs`.
    pub input_ends: Vec<usize>,
    /// Span of each `inputs` key.
    pub input_spans: Vec<Range<usize>>,
    /// Rendered `after` selectors of all instances.
    pub after: StrPool,
    /// Key index of each selector.
    pub after_keys: Vec<u32>,
    /// End of each instance's selectors in `after`.
    pub after_ends: Vec<usize>,
    /// Span of each `after` key.
    pub after_spans: Vec<Range<usize>>,
    /// The outcome each `after` key waits for.
    pub after_on: Vec<EdgeOn>,
    /// The files its command and setup lines name as scripts, the same
    /// for every instance ([`crate::scripts::named_scripts`]).
    pub scripts: Vec<String>,
}

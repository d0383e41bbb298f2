//! [`Code`]: every diagnostic code flow reports, in one registry.
//!
//! Each code is documented in `docs/reference/diagnostics.md` — what
//! triggers it, an example and how to fix it — and a test here keeps the
//! registry and that page in step.

use std::fmt;

/// Declares [`Code`] with one variant per code, its text and its doc line.
macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $text:literal,)+) => {
        /// A diagnostic's stable, machine-readable code, such as
        /// `flow::compile::cycle`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Code {
            /// Every code, in registry order.
            pub const ALL: &[Code] = &[$(Code::$variant,)+];

            /// The code as printed: `flow::compile::cycle`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)+
                }
            }
        }
    };
}

codes! {
    /// The file is not valid TOML or YAML.
    SpecSyntax = "flow::spec::syntax",
    /// A key flow does not know, usually misspelt.
    SpecUnknownKey = "flow::spec::unknown_key",
    /// A value of the wrong type.
    SpecType = "flow::spec::type",
    /// A key given twice in one YAML mapping.
    SpecDuplicateKey = "flow::spec::duplicate_key",
    /// A key a table needs is missing.
    SpecMissingKey = "flow::spec::missing_key",
    /// The file is not UTF-8 text.
    SpecNotUtf8 = "flow::spec::not_utf8",
    /// A task without a `name`.
    CompileMissingName = "flow::compile::missing_name",
    /// A task name with characters other than letters, digits, `-` and `_`.
    CompileBadName = "flow::compile::bad_name",
    /// Two tasks with one name.
    CompileDuplicateTask = "flow::compile::duplicate_task",
    /// A key where it is not allowed (`name` in `[defaults]`, `use` in a template).
    CompileMisplacedKey = "flow::compile::misplaced_key",
    /// `use` names a template that does not exist.
    CompileUnknownTemplate = "flow::compile::unknown_template",
    /// A task with neither `command` nor `argv`.
    CompileNoCommand = "flow::compile::no_command",
    /// A task with both `command` and `argv`.
    CompileCommandAndArgv = "flow::compile::command_and_argv",
    /// An empty `argv`.
    CompileEmptyArgv = "flow::compile::empty_argv",
    /// A template that does not parse, or names something undefined.
    CompileTemplate = "flow::compile::template",
    /// A task with more than one expansion.
    CompileTwoExpansions = "flow::compile::two_expansions",
    /// A `range` that does not parse or is empty.
    CompileBadRange = "flow::compile::bad_range",
    /// An expansion file that cannot be read.
    CompileUnreadableFile = "flow::compile::unreadable_file",
    /// A workflow without tasks.
    CompileNoTasks = "flow::compile::no_tasks",
    /// An expansion file that is not a regular file.
    CompileNotAFile = "flow::compile::not_a_file",
    /// A task with more instances than `--max-instances`.
    CompileTooManyInstances = "flow::compile::too_many_instances",
    /// An expansion with no instances.
    CompileEmptyExpansion = "flow::compile::empty_expansion",
    /// A `from_json` file that does not hold an array.
    CompileNotAnArray = "flow::compile::not_an_array",
    /// A `from_json` file that is not valid JSON.
    CompileBadJson = "flow::compile::bad_json",
    /// `for_each` names a task that does not exist.
    CompileUnknownTask = "flow::compile::unknown_task",
    /// Tasks or instances that wait for each other in a circle.
    CompileCycle = "flow::compile::cycle",
    /// A duration, size, amount or count that is not valid.
    CompileBadValue = "flow::compile::bad_value",
    /// A resource request that cannot be met.
    CompileImpossibleResources = "flow::compile::impossible_resources",
    /// An empty `variants` list.
    CompileEmptyVariants = "flow::compile::empty_variants",
    /// An input that does not exist and that no task produces.
    CompileMissingInput = "flow::compile::missing_input",
    /// An input that is also an output of the same instance.
    CompileInputIsOutput = "flow::compile::input_is_output",
    /// An input glob that does not parse.
    CompileBadGlob = "flow::compile::bad_glob",
    /// A file that two instances produce.
    CompileDuplicateProducer = "flow::compile::duplicate_producer",
    /// An `after` selector that names nothing, or an instance itself.
    CompileBadAfter = "flow::compile::bad_after",
    /// A file expanded before the run that a task writes under a name
    /// flow cannot see.
    CompileUnseenWriter = "flow::compile::unseen_writer",
    /// An expansion file written by another task that holds no instances
    /// or cannot be read as its expansion.
    CompileBadExpansion = "flow::compile::bad_expansion",
    /// A per-instance expansion (`for_each` with a file expansion) over a
    /// task whose instances are known only at run time.
    CompileNestedParent = "flow::compile::nested_parent",
    /// Two keys that say the same thing, or contradict each other
    /// (`continue_on_failure = false` with `max_fails`).
    CompileConflictingKeys = "flow::compile::conflicting_keys",
    /// A container engine name flow does not know (`[containers] engine`).
    CompileUnknownEngine = "flow::compile::unknown_engine",
    /// A `container` value that cannot be an image: it starts with `-`.
    CompileBadImage = "flow::compile::bad_image",
    /// An included file that cannot be read.
    IncludeMissing = "flow::include::missing",
    /// A file that includes itself, directly or through others.
    IncludeCycle = "flow::include::cycle",
    /// A namespace used twice, or also the name of a task or variable of the including file.
    IncludeClash = "flow::include::clash",
    /// A namespace that is not a valid name, or an include's variable the file does not have.
    IncludeBadValue = "flow::include::bad_value",
    /// `flow check --profile`: a task the profile's queue can never run.
    CheckQueue = "flow::check::queue",
    /// `flow check` note: a shell command takes an item read from a data
    /// file unquoted, so shell syntax in the data runs.
    CheckUnquotedData = "flow::check::unquoted_data",
    /// `flow check` note: a command runs a script flow does not track, so
    /// editing it does not rerun the task.
    CheckUntrackedScript = "flow::check::untracked_script",
    /// `flow check` note: which container engine runs the workflow's
    /// images, and where that choice comes from.
    CheckContainers = "flow::check::containers",
    /// `flow check` and `flow plan` warning: an image the container engine
    /// does not have (or cannot run); `flow run` refuses it until it does.
    CheckMissingImage = "flow::check::missing_image",
    /// A profile that the profiles file does not have.
    ProfileUnknown = "flow::profile::unknown",
    /// A value in a profile that is not valid.
    ProfileValue = "flow::profile::value",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    const PAGE: &str = include_str!("../../../docs/reference/diagnostics.md");

    /// Every code the page names, and those that start a table row.
    fn documented() -> (BTreeSet<&'static str>, BTreeSet<&'static str>) {
        let is_code_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':';
        let named = PAGE
            .match_indices("flow::")
            .map(|(at, _)| {
                let rest = &PAGE[at..];
                &rest[..rest.find(|c| !is_code_char(c)).unwrap_or(rest.len())]
            })
            .filter(|code| !code.ends_with("::")) // a prefix: `flow::spec::…`
            .collect();
        let rows = PAGE
            .lines()
            .filter_map(|line| line.strip_prefix("| `")?.split_once('`').map(|(code, _)| code))
            .filter(|code| code.starts_with("flow::"))
            .collect();
        (named, rows)
    }

    #[test]
    fn every_code_has_a_row_on_the_diagnostics_page() {
        let (_, rows) = documented();
        let missing: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).filter(|c| !rows.contains(c)).collect();
        assert!(missing.is_empty(), "not documented in docs/reference/diagnostics.md: {missing:?}");
    }

    #[test]
    fn every_code_on_the_diagnostics_page_exists() {
        let (named, rows) = documented();
        let known: BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        let unknown: Vec<&&str> = named.union(&rows).filter(|c| !known.contains(**c)).collect();
        assert!(unknown.is_empty(), "docs/reference/diagnostics.md documents codes flow does not have: {unknown:?}");
    }

    #[test]
    fn codes_are_distinct() {
        let texts: BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(texts.len(), Code::ALL.len());
    }
}

//! The filters templates may use: flow's own `shell_quote` and Jinja's
//! built-ins, registered so that strict undefined holds through every one of
//! them: a filter never turns an undefined name into a value. Only
//! `default` (and its alias `d`) accepts an undefined value; that is its
//! purpose.
//!
//! minijinja's strict mode already refuses an undefined value in most
//! built-ins; the ones listed in [`register`] would print it as nothing,
//! `null` or `undefined`, or fail with an error that does not name it, so
//! they are wrapped.

use minijinja::value::{Rest, StringInput, Value};
use minijinja::{Environment, Error, State, filters};

/// Registers `shell_quote` and re-registers the built-ins that let an
/// undefined value through.
pub(super) fn register(env: &mut Environment<'static>) {
    env.add_filter("shell_quote", shell_quote);
    let leaky = [
        ("escape", Value::from_function(filters::escape)),
        ("e", Value::from_function(filters::escape)),
        ("indent", Value::from_function(filters::indent)),
        ("chain", Value::from_function(filters::chain)),
        ("zip", Value::from_function(filters::zip)),
        ("pprint", Value::from_function(filters::pprint)),
        ("tojson", Value::from_function(filters::tojson)),
        ("split", Value::from_function(filters::split)),
        ("lines", Value::from_function(filters::lines)),
        ("round", Value::from_function(filters::round)),
        ("abs", Value::from_function(filters::abs)),
        ("format", Value::from_function(filters::format)),
        ("min", Value::from_function(filters::min)),
        ("max", Value::from_function(filters::max)),
        ("sort", Value::from_function(filters::sort)),
        ("list", Value::from_function(filters::list)),
        ("dictsort", Value::from_function(filters::dictsort)),
    ];
    for (name, inner) in leaky {
        env.add_filter(name, move |state: &mut State, args: Rest<Value>| {
            args.iter().try_for_each(|arg| defined(state, arg))?;
            inner.call(state, &args)
        });
    }
}

/// Refuses an undefined value with minijinja's own error, which names the
/// expression the value came from (`vars.greting`), so the diagnostic can
/// point at it rather than at the filter.
fn defined(state: &State, value: &Value) -> Result<(), Error> {
    if value.is_undefined() {
        StringInput::new(state, value)?;
    }
    Ok(())
}

/// The `shell_quote` filter: the value as one shell word, whatever it
/// holds: `'it'\''s'` for `it's`, `''` for nothing.
fn shell_quote(state: &State, value: &Value) -> Result<String, Error> {
    defined(state, value)?;
    Ok(quote(&value.to_string()))
}

/// `text` as one shell word.
fn quote(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,/:@%+=".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use crate::template::{Renderer, undefined_name};

    /// Issue 18: every filter, built-in or flow's own, refuses an undefined
    /// value, and the error names the value, not the filter.
    #[test]
    fn no_filter_turns_an_undefined_name_into_a_value() {
        let filters = [
            "safe",
            "escape",
            "e",
            "lower",
            "upper",
            "title",
            "capitalize",
            "replace('a', 'b')",
            "length",
            "count",
            "dictsort",
            "items",
            "reverse",
            "trim",
            "join",
            "split",
            "lines",
            "round",
            "abs",
            "int",
            "float",
            "attr('a')",
            "first",
            "last",
            "min",
            "max",
            "sort",
            "list",
            "string",
            "bool",
            "batch(2)",
            "slice(2)",
            "sum",
            "indent(2)",
            "select",
            "reject",
            "selectattr('a')",
            "rejectattr('a')",
            "map('upper')",
            "groupby('a')",
            "unique",
            "chain",
            "zip",
            "pprint",
            "format",
            "tojson",
            "shell_quote",
        ];
        let mut r = Renderer::default();
        let scope = minijinja::context! { item => "x", vars => minijinja::context! { a => 1 } };
        for filter in filters {
            for name in ["itme", "vars.b"] {
                let source = format!("[{{{{ {name} | {filter} }}}}]");
                let err = r.render_str(&source, &scope).expect_err(&source);
                assert_eq!(err.kind(), minijinja::ErrorKind::UndefinedError, "{source}: {err}");
                assert_eq!(undefined_name(&err, &source), Some(name), "{source}: {err}");
            }
        }
        for source in ["{{ 'x' | replace(item, itme) }}", "{{ item | indent(itme) }}", "{{ item | format(itme) }}"] {
            let err = r.render_str(source, &scope).expect_err(source);
            assert_eq!(undefined_name(&err, source), Some("itme"), "{source}: {err}");
        }
    }

    #[test]
    fn default_still_takes_undefined_values() {
        let mut r = Renderer::default();
        let scope = minijinja::context! { vars => minijinja::context! { a => "set" } };
        for (source, out) in [
            ("{{ x | default('a') }}", "a"),
            ("{{ vars.b | d('b') | upper }}", "B"),
            ("{{ vars.a | default('a') | shell_quote }}", "set"),
            ("{{ vars.b | default('it\\'s') | shell_quote }}", "'it'\\''s'"),
            ("{{ x is defined }}", "False"),
        ] {
            assert_eq!(r.render_str(source, &scope).unwrap(), out, "{source}");
        }
        assert!(r.render_str("{{ x | default(vars.b) }}", &scope).is_err());
    }
}

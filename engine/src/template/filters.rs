//! The filters templates may use: flow's own `shell_quote` and Jinja's
//! built-ins, registered so that strict undefined holds through every one of
//! them: a filter never turns an undefined name into a value. Only
//! `default` (and its alias `d`) accepts an undefined value; that is its
//! purpose.
//!
//! minijinja's strict mode already refuses an undefined value in most
//! built-ins; the ones listed in [`LEAKY`] would print it as nothing,
//! `null` or `undefined`, or fail with an error that does not name it, so
//! they are wrapped. For the taint check ([`super::taint`]) every filter is
//! wrapped, to see which ones change what `shell_quote` made ([`super::marker`]).

use minijinja::value::{Rest, StringInput, Value};
use minijinja::{Environment, Error, State, filters};

use super::marker;

/// The built-ins that let an undefined value through unwrapped.
const LEAKY: &[&str] = &[
    "escape", "e", "indent", "chain", "zip", "pprint", "tojson", "split", "lines", "round", "abs", "format", "min",
    "max", "sort", "list", "dictsort",
];

/// What the filters are registered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Rendering for real.
    Run,
    /// Rendering with stand-ins that mark data read from a file.
    Taint,
}

/// Registers `shell_quote` and re-registers the built-ins that need it.
pub(super) fn register(env: &mut Environment<'static>, mode: Mode) {
    match mode {
        Mode::Run => env.add_filter("shell_quote", shell_quote),
        Mode::Taint => env.add_filter("shell_quote", |state: &State, value: &Value| {
            defined(state, value)?;
            Ok::<_, Error>(
                marker::quoted(&value.to_string())
                    .map_or_else(|| Value::from(crate::shell_word::shell_word(&value.to_string())), Value::from),
            )
        }),
    }
    for (name, inner) in builtins() {
        if mode == Mode::Run && !LEAKY.contains(&name) {
            continue;
        }
        env.add_filter(name, move |state: &mut State, args: Rest<Value>| {
            args.iter().try_for_each(|arg| defined(state, arg))?;
            if mode == Mode::Run {
                return inner.call(state, &args);
            }
            // Numbers carry no shell syntax, whatever they were read from.
            if matches!(name, "int" | "float") && args.first().is_some_and(|a| marker::is_marked(&a.to_string())) {
                return Ok(Value::from(0));
            }
            let out = inner.call(state, &args)?;
            let keeps = matches!(name, "default" | "d" | "string" | "safe");
            let changed = !keeps && args.iter().any(|a| marker::has_quoted(&a.to_string()));
            Ok(if changed { marker::changed(&out) } else { out })
        });
    }
}

/// Jinja's built-in filters by name.
fn builtins() -> Vec<(&'static str, Value)> {
    vec![
        ("safe", Value::from_function(filters::safe)),
        ("escape", Value::from_function(filters::escape)),
        ("e", Value::from_function(filters::escape)),
        ("lower", Value::from_function(filters::lower)),
        ("upper", Value::from_function(filters::upper)),
        ("title", Value::from_function(filters::title)),
        ("capitalize", Value::from_function(filters::capitalize)),
        ("replace", Value::from_function(filters::replace)),
        ("length", Value::from_function(filters::length)),
        ("count", Value::from_function(filters::length)),
        ("dictsort", Value::from_function(filters::dictsort)),
        ("items", Value::from_function(filters::items)),
        ("reverse", Value::from_function(filters::reverse)),
        ("trim", Value::from_function(filters::trim)),
        ("join", Value::from_function(filters::join)),
        ("split", Value::from_function(filters::split)),
        ("lines", Value::from_function(filters::lines)),
        ("default", Value::from_function(filters::default)),
        ("d", Value::from_function(filters::default)),
        ("round", Value::from_function(filters::round)),
        ("abs", Value::from_function(filters::abs)),
        ("int", Value::from_function(filters::int)),
        ("float", Value::from_function(filters::float)),
        ("attr", Value::from_function(filters::attr)),
        ("first", Value::from_function(filters::first)),
        ("last", Value::from_function(filters::last)),
        ("min", Value::from_function(filters::min)),
        ("max", Value::from_function(filters::max)),
        ("sort", Value::from_function(filters::sort)),
        ("list", Value::from_function(filters::list)),
        ("string", Value::from_function(filters::string)),
        ("bool", Value::from_function(filters::bool)),
        ("batch", Value::from_function(filters::batch)),
        ("slice", Value::from_function(filters::slice)),
        ("sum", Value::from_function(filters::sum)),
        ("indent", Value::from_function(filters::indent)),
        ("select", Value::from_function(filters::select)),
        ("reject", Value::from_function(filters::reject)),
        ("selectattr", Value::from_function(filters::selectattr)),
        ("rejectattr", Value::from_function(filters::rejectattr)),
        ("map", Value::from_function(filters::map)),
        ("groupby", Value::from_function(filters::groupby)),
        ("unique", Value::from_function(filters::unique)),
        ("chain", Value::from_function(filters::chain)),
        ("zip", Value::from_function(filters::zip)),
        ("pprint", Value::from_function(filters::pprint)),
        ("format", Value::from_function(filters::format)),
        ("tojson", Value::from_function(filters::tojson)),
    ]
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
fn shell_quote(state: &State, value: &Value) -> Result<Value, Error> {
    defined(state, value)?;
    Ok(Value::from(crate::shell_word::shell_word(&value.to_string())))
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

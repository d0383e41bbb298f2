//! The circle test checks itself: each form a circle can take is planted
//! in a small crate written to a temporary directory and must be found.
//! In each, `a` and `b` are two modules of `m` that use each other.
//! Issue 29: forms 1 to 7 went unseen when the test read lines.

use super::module_tree::Crate;

/// The circles in a crate made of `files` (path, text), rooted at the
/// first file.
fn circles(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let path = dir.path().join(path);
        fs_err::create_dir_all(path.parent().expect("a parent")).expect("fixture directory");
        fs_err::write(path, text).expect("fixture file");
    }
    Crate::read(dir.path(), files[0].0).circles()
}

/// `["src/m/a.rs", "src/m/b.rs"]`, the circle most forms plant.
fn a_and_b() -> Vec<Vec<String>> {
    vec![vec!["src/m/a.rs".to_owned(), "src/m/b.rs".to_owned()]]
}

const LIB: (&str, &str) = ("src/lib.rs", "mod m;\n");
const B_USES_A: (&str, &str) = ("src/m/b.rs", "pub struct B;\npub fn b() -> super::a::A { super::a::A }\n");

#[test]
fn a_plain_circle_is_caught() {
    let files = [
        LIB,
        ("src/m/mod.rs", "mod a;\nmod b;\n"),
        ("src/m/a.rs", "pub struct A;\nfn a() -> super::b::B { super::b::B }\n"),
        B_USES_A,
    ];
    assert_eq!(circles(&files), a_and_b());
}

#[test]
fn one_way_is_no_circle() {
    let files = [LIB, ("src/m/mod.rs", "mod a;\nmod b;\n"), ("src/m/a.rs", "pub struct A;\n"), B_USES_A];
    assert_eq!(circles(&files), Vec::<Vec<String>>::new());
}

/// Form 1: `a` names `B` through a re-export written over several lines,
/// with a nested group.
#[test]
fn a_name_from_a_multi_line_reexport_group_is_followed() {
    let files = [
        LIB,
        ("src/m/mod.rs", "mod a;\nmod b;\n\npub use b::{\n    B,\n    inner::{Deep, Other as Renamed},\n};\n"),
        ("src/m/a.rs", "pub struct A;\nfn a() -> super::Renamed { todo() }\n"),
        (
            "src/m/b.rs",
            "pub struct B;\npub mod inner { pub struct Deep; pub struct Other; }\nfn b(_: super::a::A) {}\n",
        ),
    ];
    assert_eq!(circles(&files), a_and_b());
}

/// Form 2: the `use` comes after a `#[cfg(test)]` item, which alone is
/// skipped.
#[test]
fn code_after_a_test_item_is_read_and_the_test_item_is_not() {
    let test_item = "#[cfg(test)]\nmod tests {\n    use super::super::b::B;\n}\n";
    let after = format!("pub struct A;\n{test_item}\nuse super::b::B;\n");
    let files = [LIB, ("src/m/mod.rs", "mod a;\nmod b;\n"), ("src/m/a.rs", &after), B_USES_A];
    assert_eq!(circles(&files), a_and_b());
    let only_tests = format!("pub struct A;\n{test_item}");
    let files = [LIB, ("src/m/mod.rs", "mod a;\nmod b;\n"), ("src/m/a.rs", &only_tests), B_USES_A];
    assert_eq!(circles(&files), Vec::<Vec<String>>::new());
}

/// Form 3: the file that uses `b` is in `a/`, beside `a.rs`.
#[test]
fn a_file_in_the_directory_beside_a_module_file_is_read() {
    let files = [
        LIB,
        ("src/m/mod.rs", "mod a;\nmod b;\n"),
        ("src/m/a.rs", "mod part;\npub struct A;\n"),
        ("src/m/a/part.rs", "fn part() -> crate::m::b::B { crate::m::b::B }\n"),
        B_USES_A,
    ];
    assert_eq!(circles(&files), a_and_b());
}

/// Form 4: a file two levels down names `b` with `super::super`.
#[test]
fn super_super_is_followed() {
    let files = [
        LIB,
        ("src/m/mod.rs", "mod a;\nmod b;\n"),
        ("src/m/a/mod.rs", "mod deep;\npub struct A;\n"),
        ("src/m/a/deep.rs", "use super::super::b;\nfn deep() -> b::B { b::B }\n"),
        B_USES_A,
    ];
    assert_eq!(circles(&files), vec![vec!["src/m/a/mod.rs".to_owned(), "src/m/b.rs".to_owned()]]);
}

/// Form 5: `a` names `b` by a path through a facade above `m`: the crate
/// root re-exports `m::b` as `shortcut`.
#[test]
fn a_path_through_a_higher_facade_is_followed() {
    let files = [
        ("src/lib.rs", "mod m;\npub(crate) use m::b as shortcut;\n"),
        ("src/m/mod.rs", "mod a;\npub(crate) mod b;\n"),
        ("src/m/a.rs", "pub struct A;\nfn a() -> crate::shortcut::B { crate::shortcut::B }\n"),
        B_USES_A,
    ];
    assert_eq!(circles(&files), a_and_b());
}

/// Form 6: the module's own file has code that uses `a`, which uses
/// a function the module's file defines.
#[test]
fn a_mod_rs_with_code_counts() {
    let files = [
        LIB,
        ("src/m/mod.rs", "mod a;\n\npub fn helper() {}\n\nfn run() -> a::A { a::A }\n"),
        ("src/m/a.rs", "pub struct A;\nfn a() { super::helper() }\n"),
    ];
    assert_eq!(circles(&files), vec![vec!["src/m/a.rs".to_owned(), "src/m/mod.rs".to_owned()]]);
}

/// Form 7: the crate root (`main.rs`, as `lib.rs`) counts: `main` calls a
/// command module that uses a function `main.rs` defines, named in a macro.
#[test]
fn main_rs_counts() {
    let files = [
        ("src/main.rs", "mod run_cmd;\n\nfn main() { run_cmd::run() }\n\nfn report() {}\n"),
        ("src/run_cmd.rs", "pub fn run() { let f = vec![crate::report]; }\n"),
    ];
    assert_eq!(circles(&files), vec![vec!["src/main.rs".to_owned(), "src/run_cmd.rs".to_owned()]]);
}

/// A module's own file re-exporting a child is its facade, not an arrow:
/// `a` may use a function `mod.rs` defines beside `pub use a::A`.
#[test]
fn a_reexport_in_mod_rs_is_no_arrow() {
    let files = [
        LIB,
        ("src/m/mod.rs", "mod a;\n\npub use a::{\n    A,\n};\n\npub fn helper() {}\n"),
        ("src/m/a.rs", "pub struct A;\nfn a() { super::helper() }\n"),
    ];
    assert_eq!(circles(&files), Vec::<Vec<String>>::new());
}

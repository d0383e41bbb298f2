//! The included workflow file of the model check (`include`): a task `x`
//! in `lib/part.toml`, under the namespace `as` names (or the file's stem,
//! `part`), running in `lib/` and reading `lib/in.txt`. The edits change
//! the include's `vars`, rename the namespace, and edit the included file
//! and what it reads; the included file's default for a variable the
//! include sets changes nothing.

use super::sources::Sources;
use super::workflows::Shape;

/// The included file, relative to the workflow directory.
pub const PATH: &str = "lib/part.toml";

/// What `x` reads, beside the included file.
pub const INPUT: &str = "lib/in.txt";

/// The namespace of the included file's tasks and variables.
pub fn namespace(shape: &Shape, src: &Sources) -> &'static str {
    match shape.include {
        Some(true) if src.renamed_namespace => "lib2",
        Some(true) => "lib",
        _ => "part",
    }
}

/// The `include` line, at the top of the workflow file.
pub fn line(shape: &Shape, src: &Sources) -> String {
    let ns = if shape.include == Some(true) { format!(", as = \"{}\"", namespace(shape, src)) } else { String::new() };
    format!("include = [{{ path = \"{PATH}\"{ns}, vars = {{ word = \"w{}\" }} }}]\n\n", src.lib_word)
}

/// The included file: its default `word` (which the include overrides)
/// and the version its command writes change with `src.lib`.
pub fn file(src: &Sources) -> String {
    let [version, default, _] = src.lib;
    let gate = "test ! -e {{ vars.aux }}/fail/$FLOW_TASK.$FLOW_INDEX";
    format!(
        "[vars]\nword = \"d{default}\"\naux = \"/nonexistent\"\n\n[[tasks]]\nname = \"x\"\nrange = \"1-2\"\ninputs = [\"in.txt\"]\noutputs = [\"out/{{{{ index }}}}.txt\"]\ncommand = '''{gate} && mkdir -p out && {{ echo {{{{ vars.word }}}} v{version}; cat in.txt; }} > out/{{{{ index }}}}.txt && echo \"$FLOW_TASK[$FLOW_INDEX]|lib/out/{{{{ index }}}}.txt|i={{{{ index }}}} w={{{{ vars.word }}}} v{version} in=$(cksum < in.txt)\" >> {{{{ vars.aux }}}}/exec.log'''\n"
    )
}

/// What `lib/in.txt` holds.
pub fn input(src: &Sources) -> String {
    format!("lib input {}\n", src.lib[2])
}

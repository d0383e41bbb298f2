//! A crate's modules as the compiler reads them, and the import circles
//! between the files of each module.
//!
//! The tree is followed from the crate root through its `mod` lines (a
//! module `a` lives in `a.rs` or `a/mod.rs`, its own modules in `a/`), and
//! each file is parsed whole. Items under `#[cfg(test)]` are skipped,
//! everything else is read: `use` trees at any depth, paths in code and in
//! macro arguments. Each path is followed through the `use` items it meets
//! (`crate::runtime::origin` is wherever `runtime/mod.rs` takes `origin`
//! from) to the module whose file defines the name.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// Whether `attrs` hold `#[cfg(test)]`.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
}

/// The attributes of `item`.
fn attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The attributes of `item` inside an `impl` block.
fn impl_attrs(item: &syn::ImplItem) -> &[syn::Attribute] {
    match item {
        syn::ImplItem::Const(i) => &i.attrs,
        syn::ImplItem::Fn(i) => &i.attrs,
        syn::ImplItem::Type(i) => &i.attrs,
        syn::ImplItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// Parses `text` of `file` as Rust, or says where it is not.
fn parse(file: &Path, text: &str) -> syn::File {
    syn::parse_file(text).unwrap_or_else(|e| {
        let at = e.span().start();
        panic!("{}:{}:{}: {e}", file.display(), at.line, at.column + 1)
    })
}

/// The lines (1-based, inclusive) of the `#[cfg(test)]` items in `text`.
pub fn test_only_lines(file: &Path, text: &str) -> Vec<(usize, usize)> {
    #[derive(Default)]
    struct TestItems(Vec<(usize, usize)>);
    impl TestItems {
        fn note(&mut self, span: proc_macro2::Span) {
            self.0.push((span.start().line, span.end().line));
        }
    }
    impl<'ast> Visit<'ast> for TestItems {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            if test_only(attrs(item)) {
                self.note(syn::spanned::Spanned::span(item));
            } else {
                visit::visit_item(self, item);
            }
        }
        fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
            if test_only(impl_attrs(item)) {
                self.note(syn::spanned::Spanned::span(item));
            } else {
                visit::visit_impl_item(self, item);
            }
        }
    }
    let mut items = TestItems::default();
    items.visit_file(&parse(file, text));
    items.0
}

/// A module's path from the crate root: `["runtime", "core"]`.
type ModPath = Vec<String>;

/// One of a module's files, as a node of its circles: a child module
/// (`Some`, with the files below it) or the module's own file (`None`).
type Node = Option<String>;

/// One module with a file of its own.
struct Module {
    /// The file, relative to the directory the crate was read from.
    file: String,
    /// What its `use` items bind: each name with the path it stands for
    /// from the crate root, or `None` for a name from another crate.
    bindings: HashMap<String, Option<Vec<String>>>,
}

/// A path written in a file, from the crate root.
struct Reference {
    /// The module whose file holds the path.
    from: ModPath,
    path: Vec<String>,
    /// Written in a `pub use`: a facade, which names what it re-exports
    /// without using it.
    reexport: bool,
}

/// A crate's modules and the paths their files write.
pub struct Crate {
    modules: BTreeMap<ModPath, Module>,
    references: Vec<Reference>,
}

impl Crate {
    /// The crate whose root is `root` (`engine/src/lib.rs`), relative to `base`.
    pub fn read(base: &Path, root: &str) -> Self {
        let mut krate = Self { modules: BTreeMap::new(), references: Vec::new() };
        let root = Path::new(root);
        let dir = root.parent().expect("root file in a directory").to_path_buf();
        let mut pending = vec![(ModPath::new(), root.to_path_buf(), dir)];
        while let Some((path, file, dir)) = pending.pop() {
            let text = fs_err::read_to_string(base.join(&file)).expect("module file");
            let syntax = parse(&file, &text);
            let mut reader = Reader::new(path.clone(), &syntax);
            for name in &reader.declared {
                let (flat, nested) = (dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs"));
                let child = if base.join(&flat).exists() { flat } else { nested };
                assert!(base.join(&child).exists(), "{}: no file for `mod {name};`", file.display());
                let mut child_path = path.clone();
                child_path.push(name.clone());
                pending.push((child_path, child, dir.join(name)));
            }
            reader.visit_file(&syntax);
            krate.references.append(&mut reader.references);
            let shown = file.to_string_lossy().into_owned();
            krate.modules.insert(path, Module { file: shown, bindings: reader.bindings });
        }
        krate
    }

    /// Where `path` (from the crate root) leads: the module whose file
    /// defines its name, and that name if the path goes past the module.
    /// `None` for a path into another crate.
    fn resolve(&self, path: &[String], depth: usize) -> Option<(ModPath, Option<String>)> {
        let mut module = ModPath::new();
        for (i, segment) in path.iter().enumerate() {
            let mut child = module.clone();
            child.push(segment.clone());
            if self.modules.contains_key(&child) {
                module = child;
                continue;
            }
            return match self.modules[&module].bindings.get(segment) {
                Some(Some(target)) if depth < 32 => {
                    let followed: Vec<String> = target.iter().chain(&path[i + 1..]).cloned().collect();
                    self.resolve(&followed, depth + 1)
                }
                Some(_) => None,
                None => Some((module, Some(segment.clone()))),
            };
        }
        Some((module, None))
    }

    /// The import circles between the files of each module: for each, the
    /// files of the modules in it, sorted. A module's own file counts as
    /// one of them (`main.rs`, `lib.rs`, `mod.rs`, or `a.rs` beside `a/`),
    /// and a child module stands for all the files below it.
    pub fn circles(&self) -> Vec<Vec<String>> {
        // Per module, the edges between its own file (`None`) and its children.
        let mut edges: BTreeMap<ModPath, BTreeSet<(Node, Node)>> = BTreeMap::new();
        for reference in &self.references {
            let Some((to, item)) = self.resolve(&reference.path, 0) else { continue };
            let from = &reference.from;
            let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            let source = from.get(shared).cloned();
            let target = match to.get(shared) {
                Some(child) => Some(child.clone()),
                None if item.is_some() => None,
                None => continue,
            };
            if source == target || (source.is_none() && reference.reexport) {
                continue;
            }
            edges.entry(from[..shared].to_vec()).or_default().insert((source, target));
        }
        let mut found = Vec::new();
        for (module, edges) in edges {
            let mut graph = petgraph::graphmap::DiGraphMap::<&Node, ()>::new();
            for (a, b) in &edges {
                graph.add_edge(a, b, ());
            }
            for component in petgraph::algo::tarjan_scc(&graph) {
                if component.len() > 1 {
                    let mut files: Vec<String> = component
                        .into_iter()
                        .map(|node| {
                            let mut path = module.clone();
                            path.extend(node.clone());
                            self.modules[&path].file.clone()
                        })
                        .collect();
                    files.sort();
                    found.push(files);
                }
            }
        }
        found.sort();
        found
    }
}

/// Reads one file: the modules it declares, the names its `use` items
/// bind, and the paths it writes into its own crate.
struct Reader {
    /// The module the file is.
    file_module: ModPath,
    /// The module being read: the file's, or an inline one inside it.
    current: ModPath,
    /// The modules the file declares, each in a file of its own.
    declared: Vec<String>,
    /// The modules the file holds, declared or inline.
    children: BTreeSet<String>,
    bindings: HashMap<String, Option<Vec<String>>>,
    references: Vec<Reference>,
}

impl Reader {
    fn new(file_module: ModPath, syntax: &syn::File) -> Self {
        let (mut declared, mut children) = (Vec::new(), BTreeSet::new());
        for item in &syntax.items {
            if let syn::Item::Mod(m) = item {
                if !test_only(&m.attrs) {
                    children.insert(m.ident.to_string());
                    if m.content.is_none() {
                        declared.push(m.ident.to_string());
                    }
                }
            }
        }
        let current = file_module.clone();
        Self { file_module, current, declared, children, bindings: HashMap::new(), references: Vec::new() }
    }

    /// `segments` from the crate root, if it starts inside the crate:
    /// with `crate`, `self`, `super` or a module of this file.
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "self" => Some(self.current.iter().chain(&segments[1..]).cloned().collect()),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let kept = self.current.len().checked_sub(ups)?;
                Some(self.current[..kept].iter().chain(&segments[ups..]).cloned().collect())
            }
            name if self.current == self.file_module && self.children.contains(name) => {
                Some(self.current.iter().chain(segments).cloned().collect())
            }
            _ => None,
        }
    }

    /// Notes a path written in the file.
    fn refer(&mut self, segments: &[String], reexport: bool) {
        if let Some(path) = self.absolute(segments) {
            self.references.push(Reference { from: self.file_module.clone(), path, reexport });
        }
    }

    /// Notes each path of a `use` tree, and the names it binds.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, reexport: bool) {
        let bind = |reader: &mut Self, name: String, path: &[String]| {
            reader.refer(path, reexport);
            if reader.current == reader.file_module && name != "_" {
                let target = reader.absolute(path);
                reader.bindings.insert(name, target);
            }
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, reexport);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut path = prefix.clone();
                if name != "self" {
                    path.push(name.clone());
                }
                let bound = path.last().cloned().unwrap_or(name);
                bind(self, bound, &path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                bind(self, r.rename.to_string(), &path);
            }
            syn::UseTree::Glob(_) => self.refer(prefix, reexport),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(tree, prefix, reexport);
                }
            }
        }
    }

    /// Notes each path in a macro's arguments: `a::b::c` runs of tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        let flush = |reader: &mut Self, run: &mut Vec<String>| {
            if run.len() > 1 || run.first().is_some_and(|s| s == "super") {
                reader.refer(run, false);
            }
            run.clear();
        };
        for token in tokens {
            match token {
                TokenTree::Ident(ident) if run.is_empty() || colons == 2 => {
                    run.push(ident.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => colons += 1,
                TokenTree::Group(group) => {
                    flush(self, &mut run);
                    colons = 0;
                    self.tokens(group.stream());
                }
                other => {
                    flush(self, &mut run);
                    colons = 0;
                    if let TokenTree::Ident(ident) = other {
                        run.push(ident.to_string());
                    }
                }
            }
        }
        flush(self, &mut run);
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if test_only(attrs(item)) {
            return;
        }
        match item {
            syn::Item::Use(u) => {
                let reexport = !matches!(u.vis, syn::Visibility::Inherited);
                self.use_tree(&u.tree, &mut Vec::new(), reexport);
            }
            syn::Item::Mod(m) if m.content.is_some() => {
                self.current.push(m.ident.to_string());
                visit::visit_item_mod(self, m);
                self.current.pop();
            }
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        if !test_only(impl_attrs(item)) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 && path.leading_colon.is_none() {
            self.refer(&segments, false);
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        visit::visit_macro(self, mac);
    }
}

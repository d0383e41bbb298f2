//! `flow plan --command SELECTOR`: the command a worker would start for
//! each selected instance, as a shell script.

use flow_engine::ir::TaskId;
use flow_engine::runtime::rendered_commands;

use crate::failure::Failure;
use crate::load_workflow::Loaded;

/// The scripts of the instances `selectors` name, in the order named,
/// one blank line apart.
pub fn commands(loaded: &Loaded, selectors: &[String]) -> Result<String, Failure> {
    let graph = &loaded.graph;
    let mut tasks: Vec<TaskId> = Vec::new();
    for text in selectors {
        if let Some(group) = graph.find(text.split('[').next().unwrap_or(text))
            && let Some(producers) = graph.waits_for(group)
        {
            let names: Vec<String> = producers.iter().map(|&g| format!("`{}`", graph.group(g).name)).collect();
            return Err(Failure::Usage(format!(
                "`{text}`: the instances of `{}` are known only when {} has run",
                graph.group(group).name,
                names.join(", ")
            )));
        }
        tasks.extend(crate::explain_cmd::select(graph, text, "this workflow")?);
    }
    let rendered = rendered_commands(graph, &loaded.dir()?, None, &tasks)
        .map_err(|problems| Failure::Usage(problems.join("\nerror: ")))?;
    Ok(rendered.iter().map(|c| c.script()).collect::<Vec<_>>().join("\n"))
}

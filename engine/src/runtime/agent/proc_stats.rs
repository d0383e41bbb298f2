//! What Linux's `/proc` tells of a task's processes beyond `rusage`: the
//! peak virtual memory of its process tree ([`tree_vm_peak`], sampled
//! while it runs) and the bytes its system calls read and wrote
//! ([`io_chars`], read once it has ended and before it is reaped). Elsewhere, or without permission,
//! each is `None`: never an error.

/// The sum of `VmPeak` over `pid` and its descendants alive now, in bytes;
/// `None` if none of them could be read (it ended, or no `/proc`).
pub fn tree_vm_peak(pid: u32) -> Option<u64> {
    let mut total = None;
    let mut stack = vec![pid];
    // A bound against a tree that changes while it is walked.
    let mut visits = 0;
    while let Some(pid) = stack.pop()
        && visits < 10_000
    {
        visits += 1;
        if let Some(peak) = read(&format!("/proc/{pid}/status")).and_then(|s| vm_peak(&s)) {
            total = Some(total.unwrap_or(0) + peak);
        }
        stack.extend(children(pid));
    }
    total
}

/// Bytes `pid` and the children it waited for read and wrote through
/// system calls (`rchar`, `wchar` of `/proc/<pid>/io`); readable for a
/// process that ended and is not reaped.
pub fn io_chars(pid: u32) -> Option<(u64, u64)> {
    read(&format!("/proc/{pid}/io")).and_then(|s| parse_io(&s))
}

/// The children of every thread of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(threads) = fs_err::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    threads
        .filter_map(|t| read(&t.ok()?.path().join("children").to_string_lossy()))
        .flat_map(|list| list.split_whitespace().filter_map(|c| c.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// The text of a `/proc` file. `/proc` hands a file whole to a read with
/// room for it, so a short read is its end: one `read` for a small file,
/// where reading it as a file of unknown size takes five more system calls.
fn read(path: &str) -> Option<String> {
    use std::io::Read;
    let mut file = fs_err::File::open(path).ok()?;
    let mut text = vec![0; 4096];
    let mut len = 0;
    loop {
        len += file.read(&mut text[len..]).ok()?;
        if len < text.len() {
            break;
        }
        text.resize(text.len() * 2, 0);
    }
    text.truncate(len);
    String::from_utf8(text).ok()
}

/// `VmPeak` of a `/proc/<pid>/status` text, in bytes (the file says kB).
fn vm_peak(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmPeak:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

/// `rchar` and `wchar` of a `/proc/<pid>/io` text; `None` if one is missing.
fn parse_io(text: &str) -> Option<(u64, u64)> {
    let field =
        |name: &str| text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse::<u64>().ok());
    Some((field("rchar")?, field("wchar")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t    2580 kB\nVmSize:\t    2580 kB\n";

    const IO: &str = "rchar: 4205260\nwchar: 4194398\nsyscr: 22\nsyscw: 7\n\
                      read_bytes: 118784\nwrite_bytes: 4194304\ncancelled_write_bytes: 0\n";

    #[test]
    fn vm_peak_is_read_in_bytes() {
        assert_eq!(vm_peak(STATUS), Some(2580 * 1024));
        // A zombie's status has no memory lines.
        assert_eq!(vm_peak("Name:\tsh\nState:\tZ (zombie)\n"), None);
        assert_eq!(vm_peak("VmPeak:\t12 MB\n"), None);
    }

    #[test]
    fn io_counts_are_read() {
        assert_eq!(parse_io(IO), Some((4_205_260, 4_194_398)));
        // `syscr` is not `rchar`.
        assert_eq!(parse_io("syscr: 1\nwchar: 2\n"), None);
    }

    #[test]
    fn a_file_longer_than_the_first_read_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long");
        let text: String = (0..2000).map(|i| format!("{i}\n")).collect();
        assert!(text.len() > 4096);
        fs_err::write(&path, &text).unwrap();
        assert_eq!(read(&path.to_string_lossy()).as_deref(), Some(text.as_str()));
        assert_eq!(read(&dir.path().join("missing").to_string_lossy()), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_tree_has_a_peak() {
        let pid = std::process::id();
        assert!(tree_vm_peak(pid).is_some_and(|peak| peak > 1 << 20));
        assert!(io_chars(pid).is_some());
        assert_eq!(tree_vm_peak(u32::MAX), None);
    }
}

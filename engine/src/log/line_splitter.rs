//! [`LineSplitter`]: whole lines out of output that arrives in chunks.

use std::collections::BTreeMap;

/// Reassembles lines from chunks of several interleaved streams (keyed by
/// `K`, e.g. task and stream): a line split across chunks comes out whole.
#[derive(Debug, Clone)]
pub struct LineSplitter<K> {
    partial: BTreeMap<K, Vec<u8>>,
}

impl<K: Ord> Default for LineSplitter<K> {
    fn default() -> Self {
        Self { partial: BTreeMap::new() }
    }
}

impl<K: Ord + Clone> LineSplitter<K> {
    /// Adds a chunk of stream `key` and calls `line` with every line it
    /// completes (without the `\n`, nor a `\r` before it), stopping at its first error.
    pub fn push<E>(
        &mut self,
        key: &K,
        chunk: &[u8],
        mut line: impl FnMut(&K, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let piece = &rest[..end];
            match self.partial.remove(key) {
                Some(mut start) => {
                    start.extend_from_slice(piece);
                    line(key, trim_cr(&start))?;
                }
                None => line(key, trim_cr(piece))?,
            }
            rest = &rest[end + 1..];
        }
        if !rest.is_empty() {
            self.partial.entry(key.clone()).or_default().extend_from_slice(rest);
        }
        Ok(())
    }

    /// Calls `line` with each stream's unfinished last line, in key order, and forgets them.
    pub fn finish<E>(&mut self, mut line: impl FnMut(&K, &[u8]) -> Result<(), E>) -> Result<(), E> {
        std::mem::take(&mut self.partial).into_iter().try_for_each(|(key, rest)| line(&key, trim_cr(&rest)))
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_come_out_whole() {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        let mut collect = |k: &u8, l: &[u8]| {
            lines.push(format!("{k}:{}", String::from_utf8_lossy(l)));
            Ok::<_, ()>(())
        };
        for (key, chunk) in [(1, &b"hel"[..]), (2, b"a\r\nb"), (1, b"lo\nwor"), (1, b"ld\n\n"), (2, b"c")] {
            splitter.push(&key, chunk, &mut collect).unwrap();
        }
        splitter.finish(&mut collect).unwrap();
        assert_eq!(lines, ["2:a", "1:hello", "1:world", "1:", "2:bc"]);
    }
}

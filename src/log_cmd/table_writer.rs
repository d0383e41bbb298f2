//! [`TableWriter`]: an aligned table written as its rows come, so that a
//! table of millions of rows starts at once and holds only its first rows.

use std::io::{self, Write};

use crate::table::Table;

/// The rows a table holds before it writes anything: its columns are as
/// wide as their widest cell among these and the header.
pub const FIRST_ROWS: usize = 4096;

/// Writes rows of cells in left-aligned columns two spaces apart, as
/// [`Table`] does. The first rows (up to a number given) are held,
/// to size the columns; after them each row is written as it comes, and a
/// cell wider than its column widens it from that row on. A table of no
/// more rows than that is the same as [`Table::render`] gives.
pub struct TableWriter<'a, W: Write> {
    out: &'a mut W,
    table: Table,
    widths: Vec<usize>,
    /// The header and the rows held so far; `None` once written.
    held: Option<Vec<Vec<String>>>,
    /// How many rows (the header not counted) to hold.
    first_rows: usize,
}

impl<'a, W: Write> TableWriter<'a, W> {
    /// A table under `header` that holds its first `first_rows` rows.
    pub fn new(out: &'a mut W, header: Vec<String>, first_rows: usize) -> Self {
        TableWriter { out, table: Table::new(), widths: Vec::new(), held: Some(vec![header]), first_rows }
    }

    /// Adds a row: held while the first rows are gathered, else written.
    pub fn push(&mut self, row: Vec<String>) -> io::Result<()> {
        match &mut self.held {
            Some(held) => {
                held.push(row);
                if held.len() > self.first_rows {
                    self.write_held()?;
                }
                Ok(())
            }
            None => {
                Table::widen(&mut self.widths, &row);
                self.out.write_all(self.table.line(&row, &self.widths).as_bytes())
            }
        }
    }

    /// Writes what is still held: call it after the last row.
    pub fn finish(mut self) -> io::Result<()> {
        self.write_held()
    }

    fn write_held(&mut self) -> io::Result<()> {
        let Some(held) = self.held.take() else { return Ok(()) };
        held.iter().for_each(|row| Table::widen(&mut self.widths, row));
        held.iter().try_for_each(|row| self.out.write_all(self.table.line(row, &self.widths).as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| (*c).to_owned()).collect()
    }

    /// Writes `rows` under `header` holding `first_rows`; also the bytes
    /// written before `finish`.
    fn written(header: &[&str], rows: &[&[&str]], first_rows: usize) -> (String, String) {
        let mut out = Vec::new();
        let mut table = TableWriter::new(&mut out, row(header), first_rows);
        rows.iter().for_each(|r| table.push(row(r)).unwrap());
        let before = table.out.clone();
        table.finish().unwrap();
        (String::from_utf8(before).unwrap(), String::from_utf8(out).unwrap())
    }

    #[test]
    fn a_table_within_its_first_rows_is_aligned_as_a_whole() {
        let rows: &[&[&str]] = &[&["a", "bb"], &["ccc", "d"]];
        let (before, all) = written(&["X", "Y"], rows, 3);
        assert_eq!(before, "", "nothing is written until the table is complete");
        assert_eq!(all, Table::new().render(&[row(&["X", "Y"]), row(&["a", "bb"]), row(&["ccc", "d"])]));
        assert_eq!(all, "X    Y\na    bb\nccc  d\n");
    }

    #[test]
    fn rows_past_the_first_are_written_as_they_come_and_widen_their_columns() {
        let rows: &[&[&str]] = &[&["a", "1"], &["bb", "2"], &["c", "3"], &["dddd", "4"], &["e", "5"]];
        let (before, all) = written(&["T", "N"], rows, 2);
        assert_eq!(before, "T   N\na   1\nbb  2\nc   3\ndddd  4\ne     5\n", "written before the end");
        assert_eq!(all, before);
    }
}

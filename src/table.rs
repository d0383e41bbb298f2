//! [`Table`]: columns of text, aligned — the one way every table flow
//! prints (`flow log list`, `flow plan`, `flow runs`, `flow alloc list`,
//! `flow workers`) lines up its columns.

/// How a table's lines are laid out: cells two spaces apart, each column
/// as wide as its widest cell and at least its minimum width, left-aligned
/// unless made right-aligned; each line starts with the indent and ends
/// without trailing spaces.
#[derive(Debug, Clone, Default)]
pub struct Table {
    indent: &'static str,
    right: Vec<usize>,
    min: Vec<usize>,
}

impl Table {
    /// Left-aligned columns, no indent.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts each line with `indent`.
    pub fn indent(self, indent: &'static str) -> Self {
        Self { indent, ..self }
    }

    /// Aligns `columns` (by index) to the right.
    pub fn right(self, columns: &[usize]) -> Self {
        Self { right: columns.to_vec(), ..self }
    }

    /// Makes each column at least as wide as `widths` says, in order.
    pub fn min_widths(self, widths: &[usize]) -> Self {
        Self { min: widths.to_vec(), ..self }
    }

    /// The minimum widths, for [`Table::widen`] to grow.
    pub fn widths(&self) -> Vec<usize> {
        self.min.clone()
    }

    /// Widens `widths` to hold `row`.
    pub fn widen(widths: &mut Vec<usize>, row: &[impl AsRef<str>]) {
        if widths.len() < row.len() {
            widths.resize(row.len(), 0);
        }
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.as_ref().chars().count());
        }
    }

    /// One line, its columns `widths` wide, ending in a newline.
    pub fn line(&self, row: &[impl AsRef<str>], widths: &[usize]) -> String {
        let mut line = String::from(self.indent);
        for (i, cell) in row.iter().map(AsRef::as_ref).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths.get(i).copied().unwrap_or(0).saturating_sub(cell.chars().count()));
            if self.right.contains(&i) {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
        line
    }

    /// All of `rows`, the first usually a header, as lines.
    pub fn render<S: AsRef<str>>(&self, rows: &[impl AsRef<[S]>]) -> String {
        let mut widths = self.widths();
        for row in rows {
            Self::widen(&mut widths, row.as_ref());
        }
        rows.iter().map(|row| self.line(row.as_ref(), &widths)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_left_two_spaces_apart_without_trailing_spaces() {
        let rows = [["a", "bb"], ["ccc", "d"]];
        assert_eq!(Table::new().render(&rows), "a    bb\nccc  d\n");
    }

    #[test]
    fn columns_can_be_indented_right_aligned_and_kept_to_a_minimum_width() {
        let table = Table::new().indent("  ").right(&[1]).min_widths(&[3, 4]);
        let rows = [vec!["ID", "CPUS", "HOST"], vec!["0", "32", "node17"], vec!["10", "128", ""]];
        assert_eq!(table.render(&rows), "  ID   CPUS  HOST\n  0      32  node17\n  10    128\n");
    }

    #[test]
    fn a_cell_wider_than_the_minimum_widens_its_whole_column() {
        let table = Table::new().min_widths(&[2]);
        assert_eq!(table.render(&[["abcd", "x"], ["a", "y"]]), "abcd  x\na     y\n");
    }

    #[test]
    fn widths_count_characters_not_bytes() {
        assert_eq!(Table::new().render(&[["é", "x"], ["ab", "y"]]), "é   x\nab  y\n");
    }
}

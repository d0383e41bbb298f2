//! [`StrPool`]: many strings kept in one buffer, as the items of a domain.

use serde::{Deserialize, Serialize};

/// Many strings in one buffer: `ends[i]` is where string `i` ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<String>", into = "Vec<String>")]
pub struct StrPool {
    data: String,
    ends: Vec<u64>,
}

impl StrPool {
    /// Appends a string.
    pub fn push(&mut self, s: &str) {
        self.data.push_str(s);
        self.ends.push(self.data.len() as u64);
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the pool holds no strings.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String `i`.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.data[start..end])
    }

    /// All strings in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }
}

impl From<Vec<String>> for StrPool {
    fn from(v: Vec<String>) -> Self {
        let mut pool = StrPool::default();
        v.iter().for_each(|s| pool.push(s));
        pool
    }
}

impl From<StrPool> for Vec<String> {
    fn from(p: StrPool) -> Self {
        p.iter().map(str::to_owned).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_round_trips() {
        let pool = StrPool::from(vec!["a".to_owned(), String::new(), "ccc".to_owned()]);
        assert_eq!(pool.iter().collect::<Vec<_>>(), ["a", "", "ccc"]);
        assert_eq!(pool.get(3), None);
    }
}

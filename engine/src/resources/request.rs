//! [`Request`]: one resource variant of a group, with custom resource names
//! replaced by small indices ([`Names`]) so matching never touches strings.

use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;

use crate::ir::{Amount, Resources};

/// Custom resource names, interned: index `i` is `names[i]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    names: Vec<Arc<str>>,
    index: HashMap<Arc<str>, usize>,
}

impl Names {
    /// The index of `name`, adding it if new.
    pub(crate) fn intern(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let name: Arc<str> = Arc::from(name);
        self.names.push(name.clone());
        self.index.insert(name, self.names.len() - 1);
        self.names.len() - 1
    }

    /// The name at index `i`.
    pub(crate) fn get(&self, i: usize) -> &Arc<str> {
        &self.names[i]
    }
}

/// A resolved resource request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    /// CPUs (indexed pool).
    pub(crate) cpus: Amount,
    /// GPUs (indexed pool).
    pub(crate) gpus: Amount,
    /// Memory in bytes (sum pool).
    pub(crate) memory: u64,
    /// Custom resources by interned index (sum pools), without zero amounts.
    pub(crate) custom: Vec<(usize, Amount)>,
    /// Expected run time.
    pub(crate) time: Option<Duration>,
}

impl Request {
    /// Resolves `resources`, interning its custom resource names.
    pub(crate) fn new(resources: &Resources, names: &mut Names) -> Self {
        Self {
            cpus: resources.cpus,
            gpus: resources.gpus,
            memory: resources.memory,
            custom: resources
                .custom
                .iter()
                .filter(|(_, a)| a.0 > 0)
                .map(|(name, &amount)| (names.intern(name), amount))
                .collect(),
            time: resources.time_request.map(Duration::from_secs),
        }
    }

    /// The request with its custom resources named again, for [`super::Capacity`].
    pub(crate) fn resources(&self, names: &Names) -> Resources {
        Resources {
            cpus: self.cpus,
            gpus: self.gpus,
            memory: self.memory,
            custom: self.custom.iter().map(|&(i, amount)| (names.get(i).to_string(), amount)).collect(),
            time_request: self.time.map(|t| t.as_secs()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_interned_once() {
        let mut names = Names::default();
        let resources = Resources {
            custom: [("fpga".to_owned(), Amount::whole(2)), ("none".to_owned(), Amount::ZERO)].into(),
            ..Resources::default()
        };
        let request = Request::new(&resources, &mut names);
        assert_eq!(request.custom, [(0, Amount::whole(2))]);
        assert_eq!(names.intern("fpga"), 0);
        assert_eq!(names.intern("license"), 1);
        assert_eq!(&**names.get(1), "license");
        let named = Resources { custom: [("fpga".to_owned(), Amount::whole(2))].into(), ..resources };
        assert_eq!(request.resources(&names), named, "zero amounts are left out");
    }
}
